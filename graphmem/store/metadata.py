"""The migration of a database whose messages predate metadata filters: each message stored
with metadata gets its encoded pairs (`graphmem.messages.metadata.pairs`, from the
``metadata_json`` it was stored with) and its metadata index tokens, and its sentence units a
copy of the pairs, in
bounded transactions. A ``GraphMeta {key: 'metadata_index'}`` marker records it done: an
up-to-date database costs one read at start, and one that began with metadata filters is marked
at once. Safe to interrupt and run again."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graphmem.messages.metadata import pairs, tokens

if TYPE_CHECKING:
    from graphmem.store.connection import Connection

BACKFILL_BATCH = 5000


def migrate(store: Connection, batch: int = BACKFILL_BATCH) -> int:
    """Fill in the metadata pairs of every message that lacks them; returns how many."""
    if store.run("queries/metadata/done")[0]["done"]:
        return 0
    pending = store.run("queries/metadata/pending")
    done = 0
    for start in range(0, len(pending), batch):
        chunk = pending[start:start + batch]
        rows = []
        for r in chunk:
            encoded = pairs(json.loads(r["metadata_json"]))
            rows.append({"tenant": r["tenant"], "id": r["id"], "pairs": encoded,
                         "tokens": tokens(r["tenant"], r["owner"], encoded)})
        done += store.run("queries/metadata/backfill", write=True, rows=rows)[0]["messages"]
    store.run("queries/metadata/mark_done", write=True, now=datetime.now(UTC))
    return done
