"""Formation of procedural memory, run as durable jobs (never on the request path):

* ``form_trace`` (one per stored trace, and again after its outcome changed): boundaries, cases,
  their quality and intent embeddings; then enqueues ``form_skills`` for the owner.
* ``form_skills`` (one per owner, coalesced while pending): clusters the owner's cases and forms,
  revises (a new version that SUPERSEDES the old) or updates (support only) one skill per cluster
  with enough successful cases; flags skills whose recent executions fail.

No LLM is used (an LLM path for names, descriptions and pitfalls may come later).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from graphmem.embeddings import Embedder
from graphmem.procedural import skills as sk
from graphmem.procedural.boundaries import CONTINUATION, REQUEST, boundaries, stretches
from graphmem.procedural.cases import draft
from graphmem.procedural.clustering import Point, cluster, cluster_id
from graphmem.procedural.models import Action, FormReport, Outcome, Step
from graphmem.store.procedural import ProceduralStore, SkillWrite

MAX_CLUSTER_CASES = 2000
"""The newest cases of an owner that skill formation clusters (the work stays bounded)."""
EMBED_CHARS = 2000


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
               jobs: bool = True) -> int:
    """Form the cases of one trace (idempotent: the same trace gives the same cases). Returns
    how many; 0 for an unknown (e.g. forgotten) trace."""
    found = store.trace(trace_id)
    if found is None:
        return 0
    trace, steps = found["trace"], [step_of(r) for r in found["steps"]]
    vectors = None
    if compared := _compared(steps):
        vectors = dict(zip([s.index for s in compared],
                           embedder.embed([s.text[:EMBED_CHARS] for s in compared]), strict=True))
    outcome: Outcome = trace["outcome"]
    conditions = json.loads(trace.get("conditions_json") or "{}")
    if trace.get("agent"):
        conditions.setdefault("agent", trace["agent"])
    drafts = [draft(trace_id, trace.get("task"), part, outcome, trace["started_at"])
              for part in stretches(steps, boundaries(steps, vectors))]
    intents = embedder.embed([(d.intent or d.request or "(no request)")[:EMBED_CHARS]
                              for d in drafts])
    rows = []
    for d, vector in zip(drafts, intents, strict=True):
        tools = [a.tool for a in d.actions]
        rows.append({"id": d.id, "step_ids": [f"{trace_id}#{i}" for i in d.step_indices],
                     "props": {
            "owner": trace["owner"], "trace_id": trace_id, "intent": d.intent,
            "request": d.request, "actions_json": json.dumps([a.model_dump() for a in d.actions]),
            "tools": tools, "writes": d.writes, "entities": d.entities, "outcome": outcome,
            "conditions_json": json.dumps(conditions, sort_keys=True),
            "occurred_at": d.occurred_at, "quality": d.quality.score,
            "quality_reason": d.quality.reason, "filtered": d.quality.filtered,
            "embedding": vector, "caption": f"{outcome}: {d.intent[:50]}",
            "search_text": f"{d.intent}\n{d.request}\n{' '.join(dict.fromkeys(tools))}"}})
    store.write_cases(trace["owner"], trace_id, rows, datetime.now(UTC), jobs)
    return len(rows)


def _view(row: dict[str, Any]) -> sk.CaseView:
    return sk.CaseView(row["id"], row["intent"],
                       [Action.model_validate(a) for a in json.loads(row["actions_json"])],
                       row["outcome"], row["occurred_at"],
                       json.loads(row.get("conditions_json") or "{}"))


def form_skills(store: ProceduralStore, owner: str, min_successes: int = sk.MIN_SUCCESSES,
                now: datetime | None = None) -> FormReport:
    """Cluster the owner's cases and form, revise or update its skills (see the module doc)."""
    now = now or datetime.now(UTC)
    rows = store.owner_cases(owner, MAX_CLUSTER_CASES)
    by_id = {r["id"]: r for r in rows}
    points = [Point(r["id"], r["embedding"], [a["tool"] for a in json.loads(r["actions_json"])],
                    r["writes"] or [], r["entities"] or []) for r in rows]
    groups = cluster(points) if points else []
    known = [sk.Known(r["id"], r["lineage"], r["version"], r["signature"], frozenset(r["cases"]))
             for r in store.current_skills(owner)]
    matches = sk.match([frozenset(g) for g in groups], known)
    report = FormReport(owner=owner, cases=len(rows), clusters=len(groups))
    clusters, writes = [], []
    for members, m in zip(groups, matches, strict=True):
        views = [_view(by_id[i]) for i in members]
        good = [v for v in views if v.outcome == "success"]
        bad = [v for v in views if v.outcome in ("failure", "partial")]
        cid = cluster_id(owner, members)
        intents = [v.intent for v in sorted(views, key=lambda v: (v.outcome != "success", v.id))]
        clusters.append({"id": cid, "size": len(members), "successes": len(good),
                         "failures": len(bad), "members": members,
                         "caption": f"{len(members)} cases: {(intents or [''])[0][:40]}"})
        if len(good) < min_successes:
            continue
        write = _skill(owner, cid, views, good, bad, m, [by_id[i]["embedding"] for i in members],
                       now)
        writes.append(write)
        if write.supersedes:
            report.skills_revised += 1
        elif m.known is None:
            report.skills_created += 1
        else:
            report.skills_unchanged += 1
        report.flagged += bool(write.props["flagged"])
    store.write_skills(owner, clusters, writes, now)
    return report


def _skill(owner: str, cid: str, views: list[sk.CaseView], good: list[sk.CaseView],
           bad: list[sk.CaseView], m: sk.Match, vectors: list[list[float]],
           now: datetime) -> SkillWrite:
    steps = sk.consensus([v.actions for v in sorted(good, key=lambda v: v.id)])
    signature = sk.signature(steps)
    intents = [v.intent for v in sorted(good, key=lambda v: v.id)]
    others = [v.intent for v in views if v not in good]
    flag_reason = sk.flag(views)
    name = sk.name_of(steps)
    props: dict[str, Any] = {
        "owner": owner, "name": name,
        "description": sk.describe(steps, len(good), len(bad)),
        "when_to_use": sk.when_to_use(intents), "steps_json": json.dumps(
            [s.model_dump() for s in steps]), "signature": signature,
        "pitfalls": sk.pitfalls(steps, [v.actions for v in bad]), "successes": len(good),
        "failures": len(bad), "conditions_json": json.dumps(sk.conditions_of(good)),
        "flagged": flag_reason is not None, "flag_reason": flag_reason, "cluster": cid,
        "embedding": _mean(vectors), "caption": f"{name} ({len(good)}+/{len(bad)}-)",
        "search_text": "\n".join([*[name, *dict.fromkeys(intents + others)][:30],
                                   " ".join(s.tool for s in steps)]),
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
