"""Procedural memory's front door (``Memory.procedural``): storing traces, recording outcomes,
forming cases and skills (called by the job handlers), and searching and reading them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from concurrent.futures import Executor
from datetime import UTC, datetime
from typing import Any

from graphmem.config import Settings
from graphmem.embeddings import Embedder, query_vectors
from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.llm.client import LLMClient
from graphmem.llm.usage import tenant_scope, tenant_sink
from graphmem.procedural import formation
from graphmem.procedural.boundaries import cosine
from graphmem.procedural.models import (
    Case,
    CaseDetail,
    CaseMatch,
    FormReport,
    OutcomeIn,
    OutcomeReport,
    Recommendation,
    Skill,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    SkillStep,
    TraceIn,
    TraceReport,
)
from graphmem.procedural.recommend import action_match, named, render
from graphmem.procedural.steps import content_hash, trace_id, trace_steps
from graphmem.retrieval.fulltext import lucene_escape
from graphmem.retrieval.fusion import rrf
from graphmem.store import Store, TenantStores
from graphmem.store.usage import UsageStore

OVERFETCH = 20
FUSE_DEPTH = 20
"""Each list is read this deep before RRF fuses them (then cut to k): an item second in both
lists must beat one first in a single list, which lists cut at k cannot tell."""
MAX_STEPS_PER_REQUEST = 50_000


def _caption(kind: str, text: str, tool: str | None, keys: Sequence[str]) -> str:
    if kind == "tool_call":
        return f"{tool}({', '.join(keys)})"
    if kind == "tool_result":
        return f"{tool or 'tool'} -> {text[:40]}"
    return f"{kind}: {text[:50]}" if text else kind


class Procedural:
    """Runs, cases and skills of one tenant at a time: every method works over that tenant's
    stores."""

    def __init__(self, settings: Settings, embedder: Embedder,
                 llm: LLMClient | None = None, pool: Executor | None = None) -> None:
        self._settings = settings
        self._embedder = embedder
        self._pool = pool
        """Where a search runs its fulltext list beside the query's embedding and vector list
        (None: one after the other); its tasks never wait on others."""
        self.llm = llm
        """The LLM path of formation (None: the no-LLM path). `for_settings` sets it when an
        endpoint is configured; every call is the tenant's (usage accounting)."""

    @classmethod
    def for_settings(cls, settings: Settings, store: Store, embedder: Embedder,
                     pool: Executor | None = None) -> Procedural:
        llm_settings = settings.llm()
        client = (LLMClient(llm_settings, sink=tenant_sink(UsageStore(store).record))
                  if llm_settings.enabled else None)
        return cls(settings, embedder, client, pool)

    # --- writing ------------------------------------------------------------------------------
    def ingest(self, stores: TenantStores, traces: Sequence[TraceIn],
               by: str | None = None) -> TraceReport:
        """Store traces (one transaction): a retried trace is stored once, the same id with other
        content is a 409, and bad input names its field; nothing partial is written. ``by``:
        who sends them (each new trace's ``recorded_by``)."""
        rows: dict[str, dict[str, Any]] = {}
        steps: dict[str, list[dict[str, Any]]] = {}
        total = 0
        ids = []
        for i, t in enumerate(traces):
            where = f"traces[{i}]"
            parsed = trace_steps(t, f"{where}.messages", self._settings.max_text_chars)
            id_, digest = t.id or trace_id(t), content_hash(t)
            ids.append(id_)
            if id_ in rows:
                if rows[id_]["content_hash"] != digest:
                    raise Conflict(f"{where}.id: {id_!r} appears twice with different content",
                                   field=f"{where}.id")
                continue
            first = next(s.text for s in parsed if s.kind == "user")
            rows[id_] = {
                "id": id_, "index": i, "owner": t.owner, "agent": t.agent,
                "session_id": t.session_id,
                "task": t.task, "started_at": t.started_at, "outcome": t.outcome,
                "score": t.score, "detail": t.detail, "feedback": t.feedback,
                "conditions_json": json.dumps(t.conditions, sort_keys=True),
                "content_hash": digest, "step_count": len(parsed), "recorded_by": by,
                "caption": f"{t.outcome}: {(t.task or first)[:50]}"}
            steps[id_] = [{**s.model_dump(exclude_none=True), "id": f"{id_}#{s.index}",
                           "trace_id": id_, "owner": t.owner,
                           "caption": _caption(s.kind, s.text, s.tool, s.arg_keys)}
                          for s in parsed]
            total += len(parsed)
            if total > MAX_STEPS_PER_REQUEST:
                raise InvalidInput("traces", f"more than {MAX_STEPS_PER_REQUEST} steps in one "
                                   "request; send fewer traces at a time")
        written = stores.procedural.write_traces(
            list(rows.values()), steps, datetime.now(UTC), uuid.uuid4().hex,
            self._settings.formation_jobs)
        created = sum(1 for w in written if w["created"])
        return TraceReport(ids=ids, created=created, duplicates=len(ids) - created)

    def set_outcome(self, stores: TenantStores, id_: str, body: OutcomeIn) -> OutcomeReport:
        """Record an outcome later; the trace's cases and the owner's skills form again."""
        row = stores.procedural.set_outcome(id_, body.model_dump(), datetime.now(UTC),
                                          self._settings.formation_jobs)
        if row is None:
            raise NotFound(f"no trace {id_!r}")
        return OutcomeReport(id=row["id"], outcome=row["outcome"], previous=row["previous"])

    # --- formation (job handlers call these) --------------------------------------------------
    def form_trace(self, stores: TenantStores, id_: str, jobs: bool = True) -> int:
        """Form one trace's cases; how many (see `form_trace_report`)."""
        return int(self.form_trace_report(stores, id_, jobs)["cases"])

    def form_trace_report(self, stores: TenantStores, id_: str,
                          jobs: bool = True) -> dict[str, Any]:
        """Form one trace's cases: ``{"cases": n, "llm": {enabled, used, fallbacks}}``."""
        with tenant_scope(stores.tenant):
            return formation.form_trace(stores.procedural, self._embedder, id_, jobs, self.llm)

    def form_skills(self, stores: TenantStores, owner: str, min_successes: int | None = None,
                    ) -> FormReport:
        with tenant_scope(stores.tenant):
            return formation.form_skills(stores.procedural, owner, min_successes or 1,
                                         client=self.llm)

    # --- reading ------------------------------------------------------------------------------
    def search(self, stores: TenantStores, req: SkillSearch,
               embedder: Embedder | None = None) -> SkillSearchResult:
        """Hybrid recall of skills or cases: vector and fulltext lists fused by RRF (the
        fulltext list beside the query's embedding, in the pool). ``embedder``: the model to
        embed the query with (default: this one's); a context request passes its `QueryMemo`,
        so the question is embedded once for every unit."""
        unit = "skill" if req.units == "skills" else "case"
        p = stores.procedural
        extra = {"t": req.as_of, "known": req.known_at} if unit == "skill" else {}
        depth = max(req.k, FUSE_DEPTH)

        def fulltext(query: str) -> list[str]:
            return [i for i, _ in p.search(unit, "fulltext", req.owner, depth, OVERFETCH,
                                           query=query, **extra)]

        query = lucene_escape(req.query)
        text = self._pool.submit(fulltext, query) if query and self._pool else None
        vector = query_vectors(embedder or self._embedder,
                               [formation.request_text(req.query)])[0]
        lists = {"vector": [i for i, _ in p.search(unit, "vector", req.owner, depth, OVERFETCH,
                                                   vector=vector, **extra)]}
        if query:
            lists["fulltext"] = text.result() if text is not None else fulltext(query)
        if unit == "skill":
            candidates = list(dict.fromkeys(i for ids in lists.values() for i in ids))
            found = {r["s"]["id"]: r for r in p.get_skills(candidates, req.cases_per_skill)}
            lists["action"] = actions_asked(req.query, found)
        fused = rrf(lists)[: req.k]
        scores = {f.id: f.score for f in fused}
        ids = [f.id for f in fused]
        if unit == "skill":
            skills = [_skill(found[i]["s"], found[i]["cases"], scores[i]) for i in ids
                      if i in found]
            for skill in skills:
                row = found[skill.id]
                skill.why = recommendation(req.query, vector, skill, row["vector"],
                                           row["case_vectors"], lists)
                skill.text = render(skill)
            return SkillSearchResult(query=req.query, units=req.units, skills=skills)
        rows = {r["c"]["id"]: r for r in p.get_cases(ids)}
        cases = [_case({**rows[i]["c"], "skill": rows[i]["skill"]}, scores[i]) for i in ids
                 if i in rows]
        return SkillSearchResult(query=req.query, units=req.units, cases=cases)

    def skill(self, stores: TenantStores, id_: str, limit: int = 50, as_of: datetime | None = None,
              known_at: datetime | None = None) -> SkillDetail:
        """A skill version with its evidence; with ``as_of`` (valid time) and/or ``known_at``
        (recorded time), the version of its lineage valid then, as recorded then."""
        p = stores.procedural
        if as_of is not None or known_at is not None:
            found = p.skill_version_at(id_, as_of, known_at)
            if found is None:
                raise NotFound(f"no version of skill {id_!r} valid then")
            id_ = found
        row = p.skill_detail(id_, limit)
        if row is None:
            raise NotFound(f"no skill {id_!r}")
        return SkillDetail(skill=_skill(row["s"], []),
                           supporting=[_case(c) for c in row["supporting"]],
                           contradicting=[_case(c) for c in row["contradicting"]])

    def history(self, stores: TenantStores, id_: str) -> SkillHistory:
        row = stores.procedural.skill_history(id_)
        if row is None:
            raise NotFound(f"no skill {id_!r}")
        return SkillHistory(skills=[_skill(s, []) for s in row["skills"]],
                            supersessions=row["supersessions"])

    def case(self, stores: TenantStores, id_: str) -> CaseDetail:
        p = stores.procedural
        rows = p.get_cases([id_])
        found = p.case_steps(id_)
        if not rows or found is None:
            raise NotFound(f"no case {id_!r}")
        trace = {k: v for k, v in found["trace"].items()
                 if k not in ("content_hash", "batch", "conditions_json")}
        trace["conditions"] = json.loads(found["trace"].get("conditions_json") or "{}")
        return CaseDetail(case=_case({**rows[0]["c"], "skill": rows[0]["skill"]}),
                          steps=[formation.step_of(s) for s in found["steps"]], trace=trace)


def _case(row: dict[str, Any], score: float | None = None) -> Case:
    data = {k: v for k, v in row.items() if k in Case.model_fields}
    data["actions"] = json.loads(row.get("actions_json") or "[]")
    data["conditions"] = json.loads(row.get("conditions_json") or "{}")
    data["step_ids"] = row.get("step_ids") or []
    return Case.model_validate({**data, "score": score})


def _skill(row: dict[str, Any], cases: list[dict[str, Any]], score: float | None = None) -> Skill:
    data = {k: v for k, v in row.items() if k in Skill.model_fields}
    data["steps"] = json.loads(row.get("steps_json") or "[]")
    data["conditions"] = json.loads(row.get("conditions_json") or "{}")
    data["preconditions"] = json.loads(row.get("preconditions_json") or "[]")
    data["counter_evidence"] = json.loads(row.get("counter_json") or "[]")
    skill = Skill.model_validate({**data, "score": score, "cases": [_case(c) for c in cases]})
    skill.text = render(skill)
    return skill


def actions_asked(query: str, rows: dict[str, dict[str, Any]]) -> list[str]:
    """The skills (``get_skills`` rows by id) whose writes the request asks for, best first
    (`graphmem.procedural.skills.action_match`; ties by id): the third list search fuses."""
    scored = [(action_match(query, [SkillStep.model_validate(x) for x in
                                    json.loads(r["s"].get("steps_json") or "[]")]), i)
              for i, r in rows.items()]
    return [i for m, i in sorted(scored, key=lambda x: (-x[0], x[1])) if m > 0]


def recommendation(query: str, vector: Sequence[float], skill: Skill,
                   skill_vector: Sequence[float] | None,
                   case_vectors: Sequence[Sequence[float] | None],
                   lists: dict[str, list[str]]) -> Recommendation:
    """Why ``skill`` came up for ``query`` (its vector ``vector``): how close the request is to
    the skill's requests and to each of its cases shown, the request's words that name its
    writes, its rank in each list fused, its support."""
    return Recommendation(
        similarity=round(cosine(vector, skill_vector), 4) if skill_vector else None,
        words=named(query, skill.steps),
        ranks={name: ids.index(skill.id) + 1 for name, ids in lists.items() if skill.id in ids},
        successes=skill.successes, failures=skill.failures,
        cases=[CaseMatch(id=c.id, intent=c.masked_intent or formation.request_text(c.intent),
                         outcome=c.outcome,
                         similarity=round(cosine(vector, v), 4) if v else None)
               for c, v in zip(skill.cases, case_vectors, strict=False)])
