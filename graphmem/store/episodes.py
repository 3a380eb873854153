"""Episodes in Neo4j, bound to one tenant."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import Conflict
from graphmem.store.jobs import enqueue_tx, form_session_jobs
from graphmem.store.scope import scope_token
from graphmem.store.tenant import TenantBound, ranked_search
from graphmem.store.times import epoch_times

if TYPE_CHECKING:
    from graphmem.store.connection import Row


class EpisodeStore(TenantBound):
    def session_turns(self, owner: str, session_id: str) -> list[Row]:
        return self._run("queries/episodes/session_turns", owner=owner, session_id=session_id)

    def turn_vectors(self, ids: list[str]) -> dict[str, list[list[float]]]:
        """Message id -> its sentence vectors."""
        rows = self._run("queries/episodes/turn_vectors", ids=ids)
        return {r["id"]: r["vectors"] for r in rows}

    def write(self, owner: str, session_id: str, episodes: list[dict[str, Any]],
              now: datetime) -> list[str]:
        """Write episodes ({id, props, message_ids}) of one session in one transaction, under the
        session's formation lock; refuses (Conflict, nothing written) if another formation took
        any of these messages meanwhile. An episode one of whose messages was forgotten since
        formation read the session is not written (forgetting takes the same lock and enqueues
        the session's formation again). Relinks the owner's episodes. Returns the ids of the
        episodes not written."""
        tenant = self.tenant
        assign = [{"message_id": m, "episode": e["id"]} for e in episodes
                  for m in e["message_ids"]]

        def work(tx: ManagedTransaction) -> list[str]:
            rows = tx.run(cypher.load("queries/episodes/lock"), tenant=tenant, owner=owner,
                          session_id=session_id, now=now, assign=assign).data()
            taken = rows[0]["taken"] if rows else []
            if taken:
                raise Conflict(f"messages formed by another worker meanwhile: {taken[:5]}")
            skipped = [e["id"] for e in episodes
                       if not tx.run(cypher.load("queries/episodes/upsert"), tenant=tenant,
                                     id=e["id"], now=now, props=e["props"],
                                     message_ids=e["message_ids"],
                                     scope=scope_token(tenant, owner)).data()]
            tx.run(cypher.load("queries/episodes/link_owner"), tenant=tenant,
                   owner=owner).consume()
            return skipped

        skipped: list[str] = self._store.write_tx(work)
        return skipped

    def get(self, ids: list[str]) -> list[Row]:
        found = self._run("queries/episodes/get", ids=ids)[0]["episodes"]
        return [{**r, "e": epoch_times(r["e"])} for r in found]

    def unextracted(self, owner: str, session_id: str) -> list[Row]:
        return self._run("queries/episodes/unextracted", owner=owner, session_id=session_id)

    def mark_extracted(self, id_: str, model: str, now: datetime,
                       summary: Mapping[str, Any] | None = None) -> None:
        """Record the extraction and its outcome (`ExtractionReport.summary`) on the episode."""
        summary = summary or {}
        self._run("queries/episodes/mark_extracted", write=True, id=id_, now=now, model=model,
                  status=summary.get("status"), proposed=summary.get("proposed", 0),
                  kept=summary.get("kept", 0),
                  dropped=sum(summary.get("dropped", {}).values()),
                  report=json.dumps(dict(summary), sort_keys=True))

    def reset_extraction(self, status: str = "all_dropped", owner: str | None = None,
                         max_attempts: int | None = None) -> tuple[list[Row], list[Row]]:
        """Episodes whose extraction ended with ``status`` become extractable again, and, with
        ``max_attempts``, one ``form_session`` job per session they belong to is enqueued in
        the same transaction (so a worker extracts them anew). Returns the episodes reset
        ({id, session_id, owner}) and the jobs ({id, created})."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> tuple[list[Row], list[Row]]:
            rows = tx.run(cypher.load("queries/episodes/reset_extraction"), tenant=tenant,
                          status=status, owner=owner).data()
            sessions = {(r["owner"], r["session_id"]): r for r in rows}
            jobs = (enqueue_tx(tx, tenant, form_session_jobs(sessions.values()), max_attempts)
                    if sessions and max_attempts is not None else [])
            return rows, jobs

        result: tuple[list[Row], list[Row]] = self._store.write_tx(work)
        return result

    def search(self, index: str, owner: str, k: int, overfetch: int,
               as_of: datetime | None = None, **params: Any) -> list[tuple[str, float]]:
        """Ranked episodes of an owner; ``index`` is ``vector`` or ``fulltext``. With
        ``as_of``, only episodes whose turns were all sent by then (``reported_until <=
        as_of``; what they tell may lie later, a plan), filtered after the vector index
        (`_vector_overfetch`)."""
        if index == "vector":
            overfetch = self._vector_overfetch(overfetch, filtered_after=as_of is not None)
        return ranked_search(
            self._run, f"queries/episodes/{index}_search", k, overfetch,
            {"owner": owner, "as_of": as_of, **params},
        )[0]
