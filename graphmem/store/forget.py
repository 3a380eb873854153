"""Forgetting one thing (a message, a session, a trace, a fact) in ONE transaction, bound to a
tenant: what goes, what rests only on it goes too, the re-forming jobs and a :Deletion audit
record commit with it. The policy is explained in `graphmem.lifecycle.forget`; the Cypher is in
``cypher/queries/forget``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import TooLarge
from graphmem.store.jobs import enqueue_tx, form_session_jobs
from graphmem.store.procedural import form_skills_job
from graphmem.store.tenant import Filters, TenantBound

if TYPE_CHECKING:
    from graphmem.store.connection import Row

MESSAGE_COUNTS = ("sentences", "windows", "episodes", "entities", "sessions")
"""What `message_delete` and `session_delete` count besides messages and facts."""
MAX_FACT_ROUNDS = 10
"""Facts may rest on facts: the search for facts left without support repeats this often."""


def _q(tx: ManagedTransaction, name: str, **params: Any) -> list[Row]:
    return tx.run(cypher.load(f"queries/forget/{name}"), params).data()


def _unsupported(tx: ManagedTransaction, tenant: str, messages: list[str], episodes: list[str],
                 facts: list[str]) -> list[str]:
    """``facts`` and every fact resting only on the given messages, episodes and such facts."""
    found = list(facts)
    for _ in range(MAX_FACT_ROUNDS):
        rows = _q(tx, "unsupported_facts", tenant=tenant, messages=messages, episodes=episodes,
                  facts=found)
        if not rows:
            break
        found.extend(r["id"] for r in rows)
    return found


def _relink_episodes(tx: ManagedTransaction, tenant: str, owner: str,
                     gone: list[str]) -> None:
    """Chain the owner's remaining episodes again when ``gone`` (episode ids) removed some."""
    if gone:
        tx.run(cypher.load("queries/episodes/link_owner"), tenant=tenant, owner=owner).consume()


class ForgetStore(TenantBound):
    """The forgetting queries of one tenant. Each method returns None when the id is unknown
    (to this tenant), else {"removed": {kind: count}, "facts": [...], "episodes": [...],
    "jobs": [...]} after committing."""

    def forgotten_before(self, kind: str, id_hash: str) -> datetime | None:
        at: datetime | None = self._run("queries/forget/forgotten_before", kind=kind,
                                        id_hash=id_hash)[0]["at"]
        return at

    def _record(self, tx: ManagedTransaction, kind: str, id_hash: str, now: datetime,
                removed: dict[str, int], by: str | None) -> None:
        _q(tx, "record", tenant=self.tenant, kind=kind, id_hash=id_hash, at=now, counts=removed,
           by=by)

    def _jobs(self, tx: ManagedTransaction, jobs: list[Any]) -> list[str]:
        settings = self._store.settings
        if not jobs or not settings.formation_jobs:
            return []
        return [r["id"] for r in enqueue_tx(tx, self.tenant, jobs, settings.job_max_attempts)]

    def _delete_facts(self, tx: ManagedTransaction, ids: list[str]) -> Row:
        if not ids:
            return {"facts": 0, "supersessions": 0, "keys": 0}
        return _q(tx, "delete_facts", tenant=self.tenant, ids=ids)[0]

    def message(self, id_: str, id_hash: str, now: datetime,
                by: str | None = None) -> Row | None:
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> Row | None:
            plan = _q(tx, "message_plan", tenant=tenant, id=id_, now=now)
            if not plan:
                return None
            owner, session_id, episodes = (plan[0]["owner"], plan[0]["session_id"],
                                           plan[0]["episodes"])
            facts = _unsupported(tx, tenant, [id_], episodes, [])
            gone = self._delete_facts(tx, facts)
            row = _q(tx, "message_delete", tenant=tenant, id=id_, episodes=episodes)[0]
            _relink_episodes(tx, tenant, owner, episodes)
            jobs = self._jobs(tx, form_session_jobs(
                [{"owner": owner, "session_id": session_id}] if row["remaining"] else []))
            removed = {"messages": 1, **{k: row[k] for k in MESSAGE_COUNTS},
                       "facts": gone["facts"]}
            self._record(tx, "message", id_hash, now, removed, by)
            return {"removed": removed, "facts": facts, "episodes": episodes, "jobs": jobs,
                    "supersessions": gone["supersessions"]}

        result: Row | None = self._store.write_tx(work)
        return result

    def session(self, owner: str, session_id: str, id_hash: str, now: datetime,
                limit: int, by: str | None = None) -> Row | None:
        """Every message of ``owner``'s session and what rests only on them. Raises `TooLarge`
        (nothing deleted) when the session holds more than ``limit`` messages."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> Row | None:
            plan = _q(tx, "session_plan", tenant=tenant, owner=owner, session_id=session_id,
                      now=now, limit=limit)
            if not plan or not plan[0]["messages"]:
                return None
            ids, episodes = plan[0]["messages"], plan[0]["episodes"]
            if len(ids) > limit:
                raise TooLarge("session_id", f"the session holds more than {limit} messages, "
                               "the most one request forgets (max_forget_session_messages); "
                               "forget its owner, or its messages one by one",
                               limit=limit, actual=len(ids))
            facts = _unsupported(tx, tenant, ids, episodes, [])
            gone = self._delete_facts(tx, facts)
            row = _q(tx, "session_delete", tenant=tenant, owner=owner, session_id=session_id,
                     ids=ids, episodes=episodes)[0]
            _relink_episodes(tx, tenant, owner, episodes)
            removed = {"messages": row["messages"], **{k: row[k] for k in MESSAGE_COUNTS},
                       "facts": gone["facts"]}
            self._record(tx, "session", id_hash, now, removed, by)
            return {"removed": removed, "facts": facts, "episodes": episodes, "jobs": [],
                    "supersessions": gone["supersessions"]}

        result: Row | None = self._store.write_tx(work)
        return result

    def matching(self, owner: str, filters: Filters, id_hash: str, now: datetime,
                 limit: int, field: str, by: str | None = None) -> Row:
        """Every message of ``owner`` that ``filters`` choose, and what rests only on them, as
        each would go alone (the chains relinked around them one by one, their sessions formed
        again), in one transaction. Raises `TooLarge` naming ``field`` (nothing deleted) when
        more than ``limit`` match."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> Row:
            plan = _q(tx, "matching_plan", tenant=tenant, owner=owner, now=now, limit=limit,
                      **filters.params())[0]
            ids, episodes = plan["messages"], plan["episodes"]
            if len(ids) > limit:
                raise TooLarge(field, f"more than {limit} messages match, the most one request "
                               "forgets (max_forget_matching_messages); narrow the filter (by "
                               "session or time), or send it again after this part",
                               limit=limit, actual=len(ids))
            facts = _unsupported(tx, tenant, ids, episodes, []) if ids else []
            gone = self._delete_facts(tx, facts)
            removed = {"messages": 0, **dict.fromkeys(MESSAGE_COUNTS, 0), "facts": gone["facts"]}
            remaining: dict[str, int] = {}
            for i, id_ in enumerate(ids):  # one by one: each relinks the chain as it is then
                row = _q(tx, "message_delete", tenant=tenant, id=id_,
                         episodes=episodes if i == 0 else [])[0]
                remaining[row["session_id"]] = row["remaining"]
                removed["messages"] += 1
                for kind in MESSAGE_COUNTS:
                    removed[kind] += row[kind]
            _relink_episodes(tx, tenant, owner, episodes)
            jobs = self._jobs(tx, form_session_jobs(
                [{"owner": owner, "session_id": sid} for sid in plan["sessions"]
                 if remaining.get(sid)]))
            self._record(tx, "messages", id_hash, now, removed, by)
            return {"removed": removed, "facts": facts, "episodes": episodes, "jobs": jobs,
                    "supersessions": gone["supersessions"]}

        result: Row = self._store.write_tx(work)
        return result

    def fact(self, id_: str, id_hash: str, now: datetime, by: str | None = None) -> Row | None:
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> Row | None:
            if not _q(tx, "fact_plan", tenant=tenant, id=id_, now=now):
                return None
            facts = _unsupported(tx, tenant, [], [], [id_])
            gone = self._delete_facts(tx, facts)
            removed = {"facts": gone["facts"]}
            self._record(tx, "fact", id_hash, now, removed, by)
            return {"removed": removed, "facts": facts, "episodes": [], "jobs": [],
                    "supersessions": gone["supersessions"]}

        result: Row | None = self._store.write_tx(work)
        return result

    def document(self, id_: str, id_hash: str, now: datetime,
                 by: str | None = None) -> Row | None:
        """Forget a document (every version of its key, sections and chunks), audited."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> Row | None:
            rows = _q(tx, "document_delete", tenant=tenant, id=id_)
            if not rows:
                return None
            removed = {"documents": rows[0]["versions"], "sections": rows[0]["sections"],
                       "chunks": rows[0]["chunks"]}
            self._record(tx, "document", id_hash, now, removed, by)
            return {"removed": removed, "facts": [], "episodes": [], "jobs": [],
                    "supersessions": 0}

        result: Row | None = self._store.write_tx(work)
        return result

    def trace(self, id_: str, id_hash: str, now: datetime, by: str | None = None) -> Row | None:
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> Row | None:
            plan = _q(tx, "trace_plan", tenant=tenant, id=id_, now=now)
            if not plan:
                return None
            row = _q(tx, "trace_delete", tenant=tenant, id=id_)[0]
            jobs = self._jobs(tx, [form_skills_job(plan[0]["owner"])] if row["cases"] else [])
            removed = {"traces": 1, "steps": row["steps"], "cases": row["cases"],
                       "skills": row["skills"], "clusters": row["clusters"]}
            self._record(tx, "trace", id_hash, now, removed, by)
            return {"removed": removed, "facts": [], "episodes": [], "jobs": jobs,
                    "supersessions": 0}

        result: Row | None = self._store.write_tx(work)
        return result
