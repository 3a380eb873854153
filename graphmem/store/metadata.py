"""The migration of a database whose messages predate metadata filters: each message stored
with metadata gets its encoded pairs (`graphmem.messages.metadata.pairs`, from the
``metadata_json`` it was stored with) and its metadata index tokens, and its sentence units a
copy of the pairs, in bounded transactions (`graphmem.store.backfill`). A
``GraphMeta {key: 'metadata_index'}`` marker records it done: an up-to-date database costs one
read at start, and one that began with metadata filters is marked at once. Safe to interrupt
and run again."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from graphmem.messages.metadata import pairs, tokens
from graphmem.store.backfill import backfill

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row

BACKFILL_BATCH = 5000


def migrate(store: Connection, batch: int = BACKFILL_BATCH) -> int:
    """Fill in the metadata pairs of every message that lacks them; returns how many."""
    return backfill(store, "metadata", _row, "messages", batch)


def _row(r: Row) -> dict[str, Any]:
    encoded = pairs(json.loads(r["metadata_json"]))
    return {"tenant": r["tenant"], "id": r["id"], "pairs": encoded,
            "tokens": tokens(r["tenant"], r["owner"], encoded)}
