"""The store side of re-embedding (`graphmem.ops.reembed`): every tenant's stored vectors, read and
rewritten in batches, each node marked with the model that made its vector."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphmem.store.connection import Row
    from graphmem.store.core import Store

PENDING = {"Sentence": "queries/reembed/sentences_pending",
           "Fact": "queries/reembed/facts_pending",
           "Episode": "queries/reembed/episodes_pending",
           "Window": "queries/reembed/windows_pending",
           "Case": "queries/reembed/cases_pending",
           "Chunk": "queries/reembed/chunks_pending"}


class VectorStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    def pending(self, label: str, model: str, limit: int) -> list[Row]:
        """Up to ``limit`` nodes of ``label`` whose vector ``model`` did not make: {eid, text}."""
        return self._store.run(PENDING[label], model=model, limit=limit)

    def write(self, rows: list[dict[str, Any]], model: str) -> int:
        query, sent = self._store.vector_rows("queries/reembed/write", rows)
        return int(self._store.run(query, write=True, rows=sent, model=model)[0]["written"])

    def skills_from_cases(self, model: str, limit: int) -> int:
        """Up to ``limit`` skills get their vector again from their (re-embedded) cases."""
        return int(self._store.run("queries/reembed/skills_from_cases", write=True, model=model,
                                   limit=limit)[0]["written"])

    def topics_from_chunks(self, model: str, limit: int, chunks: int) -> int:
        """Up to ``limit`` topics get their vector again from their documents' (re-embedded)
        first ``chunks`` chunks."""
        return int(self._store.run("queries/reembed/topics_from_chunks", write=True, model=model,
                                   limit=limit, chunks=chunks)[0]["written"])

    def drop_vector_indexes(self) -> None:
        self._store.run_statements("queries/reembed/drop_vector_indexes")

    def set_meta(self, model: str, dimensions: int) -> None:
        self._store.run("queries/reembed/set_meta", write=True, model=model,
                        dimensions=dimensions, now=datetime.now(UTC))
