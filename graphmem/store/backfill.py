"""The marker-guarded backfill a data migration runs when the schema is applied
(`graphmem.store.metadata`, `graphmem.store.topic_index`): ``queries/<area>/done`` says whether
the area's ``GraphMeta`` marker is there (an up-to-date database costs that one read);
otherwise each row ``queries/<area>/pending`` returns is made into a backfill row, written by
``queries/<area>/backfill`` in transactions of ``batch`` rows, and ``queries/<area>/mark_done``
sets the marker. Safe to interrupt and run again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row


def backfill(store: Connection, area: str, row_of: Callable[[Row], dict[str, Any]],
             counted: str, batch: int) -> int:
    """Run ``area``'s backfill unless its marker is set; returns how many nodes it set (the
    backfill query's column ``counted``)."""
    if store.run(f"queries/{area}/done")[0]["done"]:
        return 0
    pending = store.run(f"queries/{area}/pending")
    done = 0
    for start in range(0, len(pending), batch):
        rows = [row_of(r) for r in pending[start:start + batch]]
        done += store.run(f"queries/{area}/backfill", write=True, rows=rows)[0][counted]
    store.run(f"queries/{area}/mark_done", write=True, now=datetime.now(UTC))
    return done
