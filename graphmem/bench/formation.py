"""The formation part of the LoCoMo benchmark: episode formation time (no-LLM path), recall when
episodes are the unit, and whether temporal questions' gold dates appear in the rendered context
with and without time normalisation."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphmem.bench.units import Probe, evidence_recall
from graphmem.datasets import locomo
from graphmem.models import SearchRequest
from graphmem.retrieval import Recipe
from graphmem.service import Memory

_DAY = ("%d %B %Y", "%d %B, %Y", "%B %d, %Y", "%B %d %Y")
_MONTH = ("%B %Y", "%B, %Y")


def form_all(mem: Memory, tenant: str, convs: Sequence[locomo.Conversation]) -> dict[str, Any]:
    """Form every session (the no-LLM path unless an LLM is configured); seconds and counts."""
    start = time.perf_counter()
    sessions = episodes = 0
    for c in convs:
        for sid in dict.fromkeys(m.session_id for m in c.messages):
            report = mem.former.form(mem.stores(tenant), c.messages[0].owner, sid)
            sessions += 1
            episodes += report.created
    seconds = time.perf_counter() - start
    messages = sum(len(c.messages) for c in convs)
    return {"formation_s": seconds, "sessions": sessions, "episodes": episodes,
            "messages_per_episode": messages / max(episodes, 1),
            "formed_by": mem.former.narrator.name}


def score_episodes(mem: Memory, tenant: str, probes: Sequence[Probe], rs: Recipe,
                   budgets: Sequence[int]) -> dict[str, Any]:
    """Recall with episodes as the unit: an episode returns all its source messages; the mean
    number of messages actually returned is reported beside each budget (the first episode is
    kept whole even when it alone exceeds the budget)."""
    recall = {b: 0.0 for b in budgets}
    returned = {b: 0 for b in budgets}
    for p in probes:
        for b in budgets:
            req = SearchRequest(query=p.query, owner=p.owner, units="episodes", max_messages=b)
            res = mem.for_tenant(tenant).search(req, rs)
            recall[b] += evidence_recall(p.gold, [h.id for h in res.hits])
            returned[b] += len(res.hits)
    n = max(len(probes), 1)
    return {"recall": {str(b): recall[b] / n for b in budgets},
            "messages_returned": {str(b): returned[b] / n for b in budgets}}


def gold_forms(answer: str) -> list[str] | None:
    """How a gold answer date can appear in a context: its ISO day, month or year (what the
    normalised context writes) and the answer as written. None when it is no single date."""
    text = answer.strip().rstrip(".")
    for fmts, iso in ((_DAY, "%Y-%m-%d"), (_MONTH, "%Y-%m")):
        for fmt in fmts:
            try:
                return [datetime.strptime(text, fmt).strftime(iso), text.lower()]
            except ValueError:
                continue
    if re.fullmatch(r"(19|20)\d\d", text):
        return [text]
    return None


def temporal_in_context(mem: Memory, tenant: str, probes: Sequence[Probe],
                        answers: dict[tuple[str, str], str], rs: Recipe,
                        budget: int = 10) -> dict[str, Any]:
    """For temporal questions (category 2) whose gold answer is one date: the share whose date
    appears in the rendered context (rrf_expand, ``budget`` messages), with the context's time
    expressions resolved ("yesterday [2023-05-07]") and raw. A reader-free proxy for how well a
    reader could answer 'when'."""
    hits = {"normalised": 0, "raw": 0}
    scored = 0
    for p in probes:
        forms = gold_forms(answers.get((p.owner, p.query), "")) if p.category == 2 else None
        if not forms:
            continue
        scored += 1
        req = SearchRequest(query=p.query, owner=p.owner, max_messages=budget)
        for label, normalise in (("normalised", True), ("raw", False)):
            res = mem.for_tenant(tenant).search(req, rs.with_(normalise_time=normalise))
            context = res.context.lower()
            hits[label] += any(f in context for f in forms)
    return {"questions": scored, "budget": budget,
            "answer_in_context": {k: v / max(scored, 1) for k, v in hits.items()}}
