"""The migration of a database whose topics predate the label index (``topic_fulltext``, in
``schema/15_topics``): each topic gets the ``scope`` of its tenant and owner
(`graphmem.store.scope.scope_token`) and its ``search_text`` (its label, which were keyphrases:
no LLM labelled a topic before), in bounded transactions (`graphmem.store.backfill`). A
``GraphMeta {key: 'topic_index'}`` marker records it done: an up-to-date database costs one
read at start. Safe to interrupt and run again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.store.backfill import backfill
from graphmem.store.scope import scope_token

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row

BACKFILL_BATCH = 5000


def migrate(store: Connection, batch: int = BACKFILL_BATCH) -> int:
    """Give every topic that lacks them its scope and search_text; returns how many."""
    return backfill(store, "topic_index", _row, "topics", batch)


def _row(r: Row) -> dict[str, Any]:
    return {"tenant": r["tenant"], "id": r["id"], "scope": scope_token(r["tenant"], r["owner"])}
