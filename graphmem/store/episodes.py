"""Episodes in Neo4j, bound to one tenant."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import Conflict
from graphmem.store.tenant import TenantBound, ranked_search

if TYPE_CHECKING:
    from graphmem.store.core import Row


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
                                     message_ids=e["message_ids"]).data()]
            tx.run(cypher.load("queries/episodes/link_owner"), tenant=tenant,
                   owner=owner).consume()
            return skipped

        skipped: list[str] = self._store.write_tx(work)
        return skipped

    def get(self, ids: list[str]) -> list[Row]:
        return self._run("queries/episodes/get", ids=ids)  # run() made the values native

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

    def reset_extraction(self, status: str = "all_dropped", owner: str | None = None
                         ) -> list[Row]:
        """Episodes whose extraction ended with ``status`` become extractable again (the next
        formation run of their session extracts them). Returns them ({id, session_id, owner})."""
        return self._run("queries/episodes/reset_extraction", write=True, status=status,
                         owner=owner)

    def search(self, index: str, owner: str, k: int, overfetch: int,
               **params: Any) -> list[tuple[str, float]]:
        """Ranked episodes of an owner; ``index`` is ``vector`` or ``fulltext``."""
        return ranked_search(
            self._run,
            f"queries/episodes/{index}_search", k, overfetch, {"owner": owner, **params},
        )[0]
