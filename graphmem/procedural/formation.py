"""Formation of procedural memory, run as durable jobs (never on the request path):

* ``form_trace`` (one per stored trace, and again after its outcome changed): boundaries, cases,
  their quality and intent embeddings; then enqueues ``form_skills`` for the owner.
* ``form_skills`` (one per owner, coalesced while pending), on two levels: clusters of the
  owner's cases by procedure (what the runs did, identifiers abstracted into typed slots:
  `graphmem.procedural.clustering`), and one skill per method (the successful cases that
  changed the same things, whoever they served: what generalises to a new request), with its
  preconditions and the counter-evidence of the failed cases of its kind. It forms, revises (a
  new version that SUPERSEDES the old) or updates (support and evidence only) each skill; flags
  skills whose recent executions fail.

Without an LLM every step is heuristic or extractive. With one (`graphmem.procedural.llm`), the
LLM finds boundaries, writes each case's summary and lessons, and writes (or revises) each
skill from its cases and its current version; a failed or invalid reply falls back to the
no-LLM path for that item, and the job's result says so.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from graphmem.embeddings import Embedder
from graphmem.llm.client import LLMClient
from graphmem.procedural import llm as pllm
from graphmem.procedural import skills as sk
from graphmem.procedural.boundaries import CONTINUATION, REQUEST, boundaries, stretches
from graphmem.procedural.cases import draft
from graphmem.procedural.clustering import Point, cluster, cluster_id
from graphmem.procedural.models import Action, FormReport, Outcome, SkillStep, Step
from graphmem.procedural.slots import identifiers, mask
from graphmem.store.procedural import ProceduralStore, SkillWrite

MAX_CLUSTER_CASES = 2000
"""The newest cases of an owner that skill formation clusters (the work stays bounded)."""
EMBED_CHARS = 2000
MAX_FALLBACKS_SHOWN = 20


def step_of(row: dict[str, Any]) -> Step:
    return Step.model_validate({k: v for k, v in row.items() if k in Step.model_fields})


def _compared(steps: Sequence[Step]) -> list[Step]:
    """The user turns boundary detection may compare: the first request, and every request
    made after a write (where an intent shift can be). Only these are embedded."""
    wrote, out = False, list[Step]()
    for s in steps:
        if s.kind == "tool_call" and s.writes:
            wrote = True
        elif s.kind == "user" and s.text.strip() and (
                not out or (wrote and REQUEST.search(s.text) and not CONTINUATION.search(s.text))):
            out.append(s)
    return out if len(out) > 1 else []


def _mean(vectors: Sequence[Sequence[float]]) -> list[float]:
    total = [math.fsum(col) for col in zip(*vectors, strict=True)]
    norm = math.sqrt(math.fsum(x * x for x in total)) or 1.0
    return [x / norm for x in total]


def form_trace(store: ProceduralStore, embedder: Embedder, trace_id: str,
               jobs: bool = True, client: LLMClient | None = None) -> dict[str, Any]:
    """Form the cases of one trace (idempotent: the same trace gives the same cases). Returns
    ``{"cases": n, "llm": ...}``; 0 cases for an unknown (e.g. forgotten) trace. With ``client``
    the LLM finds the boundaries and writes each case's summary and lessons; what it could not do
    falls back to the no-LLM path, and why is in ``llm.fallbacks``."""
    found = store.trace(trace_id)
    llm = LLMUse(client is not None)
    if found is None:
        return {"cases": 0, "llm": llm.report()}
    trace, steps = found["trace"], [step_of(r) for r in found["steps"]]
    vectors = None
    if compared := _compared(steps):
        vectors = dict(zip([s.index for s in compared],
                           embedder.embed([s.text[:EMBED_CHARS] for s in compared]), strict=True))
    outcome: Outcome = trace["outcome"]
    conditions = json.loads(trace.get("conditions_json") or "{}")
    if trace.get("agent"):
        conditions.setdefault("agent", trace["agent"])
    starts = llm.run("boundaries", partial(pllm.boundaries, steps=steps), client)
    if starts is None:
        starts = boundaries(steps, vectors)
    parts = stretches(steps, starts)
    drafts = [draft(trace_id, trace.get("task"), part, outcome, trace["started_at"])
              for part in parts]
    known = identifiers(steps)
    masked = [request_text(d.intent or d.request, known) for d in drafts]
    intents = embedder.embed(masked)
    rows = []
    for d, pattern, vector, part in zip(drafts, masked, intents, parts, strict=True):
        tools = [a.tool for a in d.actions]
        errors = sum(1 for x in part if x.kind == "tool_result" and x.error)
        notes = llm.run("case", partial(pllm.case_notes, request=d.request or d.intent,
                                        actions=d.actions, outcome=outcome, errors=errors),
                        client)
        rows.append({"id": d.id, "step_ids": [f"{trace_id}#{i}" for i in d.step_indices],
                     "props": {
            "owner": trace["owner"], "trace_id": trace_id, "intent": d.intent,
            "masked_intent": pattern,
            "request": d.request, "actions_json": json.dumps([a.model_dump() for a in d.actions]),
            "tools": tools, "writes": d.writes, "entities": d.entities, "outcome": outcome,
            "conditions_json": json.dumps(conditions, sort_keys=True),
            "occurred_at": d.occurred_at, "quality": d.quality.score,
            "quality_reason": d.quality.reason, "filtered": d.quality.filtered,
            "embedding": vector, "caption": f"{outcome}: {d.intent[:50]}",
            "summary": notes.summary if notes else None,
            "lessons": notes.lessons if notes else [],
            "search_text": f"{d.intent}\n{d.request}\n{' '.join(dict.fromkeys(tools))}"}})
    if not store.write_cases(trace["owner"], trace_id, rows, datetime.now(UTC), jobs):
        rows = []  # forgotten while its cases were formed: nothing written
    return {"cases": len(rows), "llm": llm.report()}


T = TypeVar("T")


class LLMUse:
    """What the LLM path did during one formation: calls that worked, and each fallback to the
    no-LLM path with its reason (kept in the job's result)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.used = 0
        self.fallbacks: list[str] = []

    def run(self, what: str, call: Callable[[LLMClient], T], client: LLMClient | None) -> T | None:
        if client is None:
            return None
        try:
            result = call(client)
        except pllm.Fallback as exc:
            self.fallbacks.append(f"{what}: {exc}"[:500])
            return None
        self.used += 1
        return result

    def report(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "used": self.used,
                "fallbacks": self.fallbacks[:MAX_FALLBACKS_SHOWN],
                "fallback_count": len(self.fallbacks)}


def request_text(text: str, known: dict[str, str] | None = None) -> str:
    """What a case's (or a query's) vector is made of: its request with every identifier
    masked (`graphmem.procedural.slots.mask`; ``known``: the run's own identifiers), so that
    vectors compare what was asked, not whom it was for."""
    return mask(text or "(no request)", known)[:EMBED_CHARS]


def _view(row: dict[str, Any]) -> sk.CaseView:
    return sk.CaseView(row["id"], row.get("masked_intent") or request_text(row["intent"]),
                       [Action.model_validate(a) for a in json.loads(row["actions_json"])],
                       row["outcome"], row["occurred_at"],
                       json.loads(row.get("conditions_json") or "{}"))


def form_skills(store: ProceduralStore, owner: str, min_successes: int = sk.MIN_SUCCESSES,
                now: datetime | None = None, client: LLMClient | None = None) -> FormReport:
    """Two levels over the owner's cases (see the module doc): clusters by procedure, and one
    skill per method (the set of tools that changed state) of the successful cases; a failed
    case counts against the method that succeeded in its cluster, else among the cases that
    asked alike (clusters of the masked requests alone), else its own (`skills.methods`).
    With ``client`` the LLM writes (or revises) each skill; fallbacks are in ``report.llm``."""
    now = now or datetime.now(UTC)
    llm = LLMUse(client is not None)
    rows = store.owner_cases(owner, MAX_CLUSTER_CASES)
    by_id = {r["id"]: r for r in rows}
    views = {r["id"]: _view(r) for r in rows}
    points = [Point(r["id"], r["embedding"], views[r["id"]].actions) for r in rows]
    groups = cluster(points)
    asked_of = {i: str(n) for n, g in enumerate(cluster(points, request_weight=1.0)) for i in g}
    clusters: list[dict[str, Any]] = []
    cluster_of: dict[str, str] = {}
    for members in groups:
        cid = cluster_id(owner, members)
        cluster_of.update((i, cid) for i in members)
        vs = [views[i] for i in members]
        wins = sum(v.outcome == "success" for v in vs)
        intents = [v.intent for v in sorted(vs, key=lambda v: (v.outcome != "success", v.id))]
        clusters.append({"id": cid, "size": len(members), "successes": wins,
                         "failures": sum(v.outcome in ("failure", "partial") for v in vs),
                         "members": members,
                         "caption": f"{len(members)} cases: {(intents or [''])[0][:40]}"})
    methods = sk.methods(list(views.values()), cluster_of, min_successes, asked_of)
    current = store.current_skills(owner)
    known = [sk.Known(r["id"], r["lineage"], r["version"], r["signature"], frozenset(r["cases"]))
             for r in current]
    shown = {r["id"]: {"name": r.get("name"), "steps": r["signature"],
                       "pitfalls": r.get("pitfalls") or []} for r in current}
    matches = sk.match([frozenset(m.supporting) for m in methods], known)
    report = FormReport(owner=owner, cases=len(rows), clusters=len(groups))
    writes = []
    for method, m in zip(methods, matches, strict=True):
        good = [views[i] for i in method.supporting]
        bad = [views[i] for i in method.contradicting]
        home = Counter(cluster_of[v.id] for v in good).most_common(1)[0][0]
        write = _skill(owner, home, good, bad, m, [by_id[v.id]["embedding"] for v in good], now,
                       partial(_llm_skill, good=good, bad=bad,
                               current=shown.get(m.known.id) if m.known else None),
                       llm, client)
        writes.append(write)
        if write.supersedes:
            report.skills_revised += 1
        elif m.known is None:
            report.skills_created += 1
        else:
            report.skills_unchanged += 1
        report.flagged += bool(write.props["flagged"])
    store.write_skills(owner, clusters, writes, now)
    report.llm = llm.report()
    return report


def _words(actions: Sequence[Action], name: str | None, use: str) -> str:
    """What fulltext search matches a skill on: the method's own words (its state-changing tools
    as words: ``cancel_reservation`` -> "cancel reservation"), and, when the LLM wrote the skill,
    its name and when to use it. The requests it served are matched by its vector (their mean):
    on tau-bench, adding their words to the fulltext made retrieval worse (README)."""
    words = [sk.spoken(t) for t in dict.fromkeys(a.tool for a in actions if a.writes)]
    return "\n".join([*words, *([name, use] if name else [])])  # read-only: by vector only


def _llm_skill(client: LLMClient, good: list[sk.CaseView], bad: list[sk.CaseView],
               current: dict[str, Any] | None) -> tuple[pllm.SkillReply, list[SkillStep]]:
    consensus = sk.consensus([v.actions for v in sorted(good, key=lambda v: v.id)])
    return pllm.write_skill(client, [(v.intent, v.actions) for v in good],
                            [(v.intent, v.actions) for v in bad], current, consensus)


def _skill(owner: str, cid: str, good: list[sk.CaseView], bad: list[sk.CaseView],
           m: sk.Match, vectors: list[list[float]], now: datetime,
           ask: Callable[[LLMClient], tuple[pllm.SkillReply, list[SkillStep]]] | None = None,
           llm: LLMUse | None = None, client: LLMClient | None = None) -> SkillWrite:
    steps = sk.consensus([v.actions for v in sorted(good, key=lambda v: v.id)])
    intents = [v.intent for v in sorted(good, key=lambda v: v.id)]
    flag_reason = sk.flag([*good, *bad])
    name = sk.name_of(steps)
    description = sk.describe(steps, len(good), len(bad))
    use = sk.when_to_use(intents)
    written = llm.run("skill", ask, client) if llm and ask else None
    if written is not None:
        reply, steps = written
        name, use = reply.name.strip(), reply.when_to_use.strip()
        description = f"{reply.description.strip()} {sk.describe(steps, len(good), len(bad))}"
    checks = sk.preconditions(steps, [v.actions for v in good])
    against = sk.counter_evidence(steps, checks, [v.actions for v in good],
                                  [(v.id, v.actions) for v in bad])
    pitfalls = [f"{c.count} of {c.of} failed runs {c.what}" for c in against]
    if written is not None:
        pitfalls = [x.strip() for x in written[0].pitfalls if x.strip()] or pitfalls
    signature = sk.signature(steps)
    props: dict[str, Any] = {
        "owner": owner, "name": name, "description": description,
        "when_to_use": use, "steps_json": json.dumps(
            [s.model_dump() for s in steps]), "signature": signature,
        "written_by": "llm" if written is not None else "consensus",
        "pitfalls": pitfalls, "successes": len(good),
        "failures": len(bad), "conditions_json": json.dumps(sk.conditions_of(good)),
        "preconditions_json": json.dumps([c.model_dump() for c in checks]),
        "counter_json": json.dumps([c.model_dump() for c in against]),
        "flagged": flag_reason is not None, "flag_reason": flag_reason, "cluster": cid,
        "method": sk.method_key(good[0].actions),
        "embedding": _mean(vectors), "caption": f"{name} ({len(good)}+/{len(bad)}-)",
        "search_text": _words(good[0].actions, name if written is not None else None, use),
    }
    supporting, contradicting = [v.id for v in good], [v.id for v in bad]
    valid_from = max(v.occurred_at for v in good)
    if m.known is not None and m.known.signature == signature:
        return SkillWrite(m.known.id, props, supporting, contradicting)
    lineage = m.known.lineage if m.known else sk.lineage_id(owner, min(supporting))
    version = m.known.version + 1 if m.known else 1
    props.update({"lineage": lineage, "version": version, "valid_from": valid_from,
                  "valid_to": None, "recorded_at": now, "invalidated_at": None})
    if m.known is None:
        return SkillWrite(f"{lineage}-v{version}", props, supporting, contradicting)
    fresh = sorted(set(supporting) - m.known.cases) or sorted(supporting)
    return SkillWrite(f"{lineage}-v{version}", props, supporting, contradicting,
                      supersedes=m.known.id, reason=sk.change_reason(m.known.signature, signature),
                      sources=fresh[:50])
