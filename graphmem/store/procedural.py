"""Procedural memory in Neo4j, bound to one tenant: traces and steps, cases, clusters, skills. The
only code that talks to the driver for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import Conflict, in_use
from graphmem.store.connection import native
from graphmem.store.jobs import NewJob, enqueue_tx
from graphmem.store.scope import scope_token
from graphmem.store.tenant import TenantBound, ranked_search

if TYPE_CHECKING:
    from graphmem.store.connection import Row

FORM_TRACE = "form_trace"
FORM_SKILLS = "form_skills"


def form_trace_job(owner: str, trace_id: str) -> NewJob:
    return NewJob(FORM_TRACE, f"{owner}/{trace_id}", {"owner": owner, "trace_id": trace_id},
                  owner)


def form_skills_job(owner: str) -> NewJob:
    return NewJob(FORM_SKILLS, owner, {"owner": owner}, owner)


def _q(tx: ManagedTransaction, name: str, **params: Any) -> list[Row]:
    return [native(r.data()) for r in tx.run(cypher.load(f"queries/procedural/{name}"), params)]


@dataclass
class SkillWrite:
    """One skill version to write; ``supersedes`` names the version it replaces."""

    id: str
    props: dict[str, Any]
    supporting: list[str]
    contradicting: list[str]
    supersedes: str | None = None
    reason: str | None = None
    sources: list[str] | None = None


class ProceduralStore(TenantBound):
    # --- traces -------------------------------------------------------------------------------
    def write_traces(self, traces: list[Row], steps: dict[str, list[Row]], now: datetime,
                     batch: str, jobs: bool) -> list[Row]:
        """Store traces with their steps (trace id -> steps in order) in ONE transaction, and
        (``jobs``) a ``form_trace`` job per new trace, committed with them. Conflict, nothing
        written, if an id is stored with other content. Returns [{id, created}] in input
        order."""
        tenant = self.tenant
        max_attempts = self._store.settings.job_max_attempts

        def work(tx: ManagedTransaction) -> list[Row]:
            rows = _q(tx, "write_traces", tenant=tenant, batch=batch, now=now, rows=traces)
            clashes = [r["id"] for r in rows if r["conflict"]]
            if clashes:
                first = min(t["index"] for t in traces if t["id"] in clashes)
                raise Conflict(in_use(f"traces[{first}]", clashes), field=f"traces[{first}].id")
            created = {r["id"] for r in rows if r["created"]}
            if created:
                _q(tx, "write_steps", tenant=tenant,
                   traces=[{"id": i, "steps": steps[i]} for i in sorted(created)])
                if jobs:
                    owners = {t["id"]: t["owner"] for t in traces}
                    enqueue_tx(tx, tenant, [form_trace_job(owners[i], i) for i in sorted(created)],
                               max_attempts)
            return [{"id": r["id"], "created": r["created"]} for r in rows]

        result: list[Row] = self._store.write_tx(work)
        return result

    def set_outcome(self, id_: str, params: dict[str, Any], now: datetime,
                    jobs: bool) -> Row | None:
        """Record a new outcome and (``jobs``) enqueue the trace's formation again, together."""
        tenant = self.tenant
        max_attempts = self._store.settings.job_max_attempts

        def work(tx: ManagedTransaction) -> Row | None:
            rows = _q(tx, "set_outcome", tenant=tenant, id=id_, now=now, **params)
            if rows and jobs:
                enqueue_tx(tx, tenant, [form_trace_job(rows[0]["owner"], id_)], max_attempts)
            return rows[0] if rows else None

        result: Row | None = self._store.write_tx(work)
        return result

    def trace(self, id_: str) -> Row | None:
        rows = self._run("queries/procedural/trace", id=id_)
        return rows[0] if rows else None

    # --- cases --------------------------------------------------------------------------------
    def write_cases(self, owner: str, trace_id: str, cases: list[Row], now: datetime,
                    jobs: bool) -> bool:
        """(Re)write a trace's cases and (``jobs``) enqueue the owner's skill formation, in one
        transaction, under the owner's procedural lock (which forgetting a trace takes too).
        False, nothing written, when the trace was forgotten since formation read it."""
        tenant = self.tenant
        max_attempts = self._store.settings.job_max_attempts

        def work(tx: ManagedTransaction) -> bool:
            _q(tx, "lock_owner", tenant=tenant, owner=owner, now=now)
            if not _q(tx, "write_cases", tenant=tenant, trace_id=trace_id, now=now, cases=cases,
                      scope=scope_token(tenant, owner)):
                return False
            if jobs:
                enqueue_tx(tx, tenant, [form_skills_job(owner)], max_attempts)
            return True

        written: bool = self._store.write_tx(work)
        return written

    def owner_cases(self, owner: str, limit: int) -> list[Row]:
        return self._run("queries/procedural/owner_cases", owner=owner, limit=limit)

    def current_skills(self, owner: str) -> list[Row]:
        return self._run("queries/procedural/current_skills", owner=owner)

    def write_skills(self, owner: str, clusters: list[Row], skills: list[SkillWrite],
                     now: datetime) -> None:
        """Replace the owner's clusters and write skill versions, under the owner's lock, in one
        transaction."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> None:
            _q(tx, "lock_owner", tenant=tenant, owner=owner, now=now)
            _q(tx, "write_clusters", tenant=tenant, owner=owner, now=now, clusters=clusters)
            for s in skills:
                _q(tx, "upsert_skill", tenant=tenant, id=s.id, props=s.props, now=now,
                   supporting=s.supporting, contradicting=s.contradicting,
                   scope=scope_token(tenant, owner))
                if s.supersedes:
                    _q(tx, "supersede_skill", tenant=tenant, by=s.id, of=s.supersedes, now=now,
                       reason=s.reason or "procedure changed", sources=s.sources or [])

        self._store.write_tx(work)

    # --- reading ------------------------------------------------------------------------------
    def search(self, unit: str, index: str, owner: str, k: int, overfetch: int,
               **params: Any) -> list[tuple[str, float]]:
        """Ranked ``unit`` (case or skill) ids of an owner; ``index`` is vector or fulltext
        (the vector list of skills is filtered by version after the index, of cases by
        nothing: `_vector_overfetch`)."""
        if index == "vector":
            overfetch = self._vector_overfetch(overfetch, filtered_after=unit == "skill")
        return ranked_search(self._run, f"queries/procedural/{unit}_{index}_search", k,
                             overfetch, {"owner": owner, **params})[0]

    def get_cases(self, ids: list[str]) -> list[Row]:
        return self._run("queries/procedural/get_cases", ids=ids)

    def get_skills(self, ids: list[str], cases: int) -> list[Row]:
        return self._run("queries/procedural/get_skills", ids=ids, cases=cases)

    def skill_detail(self, id_: str, limit: int) -> Row | None:
        rows = self._run("queries/procedural/skill_detail", id=id_, limit=limit)
        return rows[0] if rows else None

    def skill_version_at(self, id_: str, t: datetime | None,
                         known: datetime | None) -> str | None:
        """The id of the version of ``id_``'s lineage valid at ``t`` as recorded by ``known``."""
        rows = self._run("queries/procedural/skill_version_at", id=id_, t=t, known=known)
        return str(rows[0]["id"]) if rows else None

    def skill_history(self, id_: str) -> Row | None:
        rows = self._run("queries/procedural/skill_history", id=id_)
        return rows[0] if rows and rows[0]["skills"] else None

    def case_steps(self, id_: str) -> Row | None:
        rows = self._run("queries/procedural/case_steps", id=id_)
        return rows[0] if rows else None
