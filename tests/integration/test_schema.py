"""Schema: idempotent, every index ONLINE, and a different embedding model is refused."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.errors import SchemaMismatch
from graphmem.service import Memory


def test_indexes_online_and_idempotent(memory: Memory, cypher: Any) -> None:
    memory.ensure_schema()  # second application changes nothing
    rows = cypher("SHOW INDEXES YIELD name, type, state RETURN name, type, state")
    names = {r["name"]: r for r in rows}
    for name in ("sentence_vector", "message_fulltext", "message_key", "message_session_time"):
        assert names[name]["state"] == "ONLINE", names.get(name)
    assert names["sentence_vector"]["type"] == "VECTOR"
    assert names["message_fulltext"]["type"] == "FULLTEXT"


def test_other_embedding_model_is_refused(memory: Memory) -> None:
    with pytest.raises(SchemaMismatch, match="GRAPHMEM_EMBEDDING_MODEL"):
        memory.store.apply_schema("some-other-model", 768)
    with pytest.raises(SchemaMismatch):
        memory.store.apply_schema("some-other-model", memory.embedder.dimensions)
