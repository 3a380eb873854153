"""The migration of a database whose topics predate the label index (``topic_fulltext``, in
``schema/15_topics``): each topic gets the ``scope`` of its tenant and owner
(`graphmem.store.scope.scope_token`) and its ``search_text`` (its label, which were keyphrases:
no LLM labelled a topic before), in bounded transactions. A ``GraphMeta {key: 'topic_index'}``
marker records it done: an up-to-date database costs one read at start. Safe to interrupt and
run again."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graphmem.store.scope import scope_token

if TYPE_CHECKING:
    from graphmem.store.connection import Connection

BACKFILL_BATCH = 5000


def migrate(store: Connection, batch: int = BACKFILL_BATCH) -> int:
    """Give every topic that lacks them its scope and search_text; returns how many."""
    if store.run("queries/topic_index/done")[0]["done"]:
        return 0
    pending = store.run("queries/topic_index/pending")
    done = 0
    for start in range(0, len(pending), batch):
        rows = [{"tenant": r["tenant"], "id": r["id"],
                 "scope": scope_token(r["tenant"], r["owner"])}
                for r in pending[start:start + batch]]
        done += store.run("queries/topic_index/backfill", write=True, rows=rows)[0]["topics"]
    store.run("queries/topic_index/mark_done", write=True, now=datetime.now(UTC))
    return done
