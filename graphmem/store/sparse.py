"""Messages' learned-sparse word pieces in Neo4j, bound to one tenant: which messages still need
them, writing them (``Message.sparse_text``, indexed by ``message_sparse``), and their recall.
See `graphmem.embedders.sparse` for what the text holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.store.tenant import Filters, TenantBound, ranked_search

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row


class SparseStore(TenantBound):
    def pending(self, owner: str, model: str, limit: int,
                session_id: str | None = None) -> list[Row]:
        """Up to ``limit`` of the owner's messages (of one session, or any) without pieces of
        ``model``: rows {id, text}."""
        return self._run("queries/sparse/pending", owner=owner, session_id=session_id,
                         model=model, limit=limit)

    def write(self, model: str, rows: list[dict[str, str]]) -> int:
        """Store each message's pieces (rows {id, text}); returns how many messages took them."""
        if not rows:
            return 0
        done = self._run("queries/sparse/write", write=True, model=model, rows=rows)
        return int(done[0]["written"])

    def search(self, owner: str, query: str, k: int, overfetch: int,
               filters: Filters) -> list[tuple[str, float]]:
        """The owner's best k messages for a sparse query (`embedders.sparse.query_text`)."""
        params = {"owner": owner, "query": query, "k": k, **filters.params()}
        return ranked_search(self._run_plain, "queries/sparse/search", k, overfetch, params)[0]


def pending_owners(store: Connection, model: str, limit: int) -> list[tuple[str, str]]:
    """Up to ``limit`` (tenant, owner) pairs, of every tenant, with messages lacking pieces of
    ``model`` (an operator's backfill)."""
    return [(r["tenant"], r["owner"])
            for r in store.run("queries/sparse/pending_owners", model=model, limit=limit)]
