"""Turn windows in Neo4j, bound to one tenant: the ``:Window`` nodes formation builds over each
session (3 and 5 consecutive turns, ``-[:COVERS]->`` their messages) and their recall."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.store.scope import scope_token
from graphmem.store.tenant import Filters, TenantBound, ranked_rows

if TYPE_CHECKING:
    from graphmem.store.connection import Row


class WindowStore(TenantBound):
    def session_ids(self, owner: str, session_id: str) -> set[str]:
        """The ids of the windows the session has now."""
        rows = self._run("queries/turn_windows/session_ids", owner=owner, session_id=session_id)
        return {r["id"] for r in rows}

    def replace(self, owner: str, session_id: str, messages: int, keep: list[str],
                fresh: list[dict[str, Any]], now: datetime) -> int | None:
        """In one transaction under the session's formation lock: delete the session's windows
        not in ``keep`` and create ``fresh`` ones (rows of `create.cypher`). Writes nothing and
        returns None when the session no longer has ``messages`` messages (the plan is stale: the
        job of the message that arrived meanwhile rebuilds); else how many stale were deleted."""
        tenant = self.tenant
        where: dict[str, Any] = {"tenant": tenant, "owner": owner, "session_id": session_id}
        create, fresh = self._store.vector_rows("queries/turn_windows/create", fresh)

        def work(tx: ManagedTransaction) -> int | None:
            now_count = tx.run(cypher.load("queries/turn_windows/lock"),
                               {**where, "now": now}).single(strict=True)["messages"]
            if now_count != messages:
                return None
            deleted = tx.run(cypher.load("queries/turn_windows/delete_stale"),
                             {**where, "keep": keep}).single(strict=True)["deleted"]
            if fresh:
                tx.run(cypher.load(create), {**where, "now": now, "rows": fresh,
                                             "scope": scope_token(tenant, owner)}).consume()
            return int(deleted)

        result: int | None = self._store.write_tx(work)
        return result

    def search(self, index: str, owner: str, size: int, k: int, overfetch: int,
               filters: Filters, **params: Any) -> list[Row]:
        """Ranked windows of one size ({id, score, messages}); ``index`` is ``vector`` (param
        ``vector``; exact scan when the filtered index runs dry) or ``fulltext`` (``query``).
        The vector list reads just k windows unless a session or time filter follows
        (`_vector_overfetch`; the index filters the size too)."""
        args = {"owner": owner, "size": size, **filters.params(), **params}
        if index == "vector":
            overfetch = self._vector_overfetch(overfetch, filters != Filters())
        rows, exhausted = ranked_rows(self._run_plain, f"queries/turn_windows/{index}_search",
                                      k, overfetch, args, widen=index != "vector")
        if index == "vector" and len(rows) < k and not exhausted:
            rows = self._run_plain("queries/turn_windows/vector_search_exact", k=k, **args)
        return rows
