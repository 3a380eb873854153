"""Schema: idempotent, every index ONLINE, and a different embedding model is refused."""

from __future__ import annotations

import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from neo4j.exceptions import ClientError

from graphmem import cypher as named
from graphmem.errors import SchemaMismatch
from graphmem.service import Memory
from graphmem.store.core import VECTOR_INDEXES, index_quantized, schema_statement


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


OWNER_QUERIES = ["queries/owners/delete_owner_step", "queries/owners/owner_counts",
                 "audit/owner_entities",
                 "queries/procedural/owner_cases", "queries/procedural/current_skills",
                 "queries/episodes/link_owner", "queries/turn_windows/vector_search_exact",
                 "queries/jobs/counts", "queries/jobs/list", "queries/llm_usage/list"]


@pytest.mark.parametrize("name", OWNER_QUERIES)
def test_an_owner_is_read_through_an_index(memory: Memory, name: str) -> None:
    """The queries that read one owner's (or one tenant's) nodes of a label seek an index on
    (tenant, owner) or (tenant): a label scan reads every tenant's nodes (forgetting an owner
    in a tenant of 1,000,000 messages scanned 2.8 million entities per step)."""
    query = named.load(name)
    params: dict[str, Any] = dict.fromkeys(re.findall(r"\$(\w+)", query))
    params.update(tenant="t", owner="o")
    with memory.store._driver.session(database=memory.settings.neo4j_database) as session:
        plan = session.run("EXPLAIN " + query, params).consume().plan
    assert plan is not None
    scans = [op for op in _operators(plan) if "LabelScan" in op or "LabelsScan" in op]
    assert not scans, (name, scans)


def _operators(plan: Any) -> list[str]:
    return [plan["operatorType"].split("@")[0],
            *(op for child in plan.get("children", []) for op in _operators(child))]


def test_an_index_built_meanwhile_by_another_process_is_success(memory: Memory) -> None:
    """`IF NOT EXISTS` checks before it creates: of two processes opening a new database
    together, the later one's creation fails as equivalent to the earlier one's. Shown here
    without the race: the same index created again without the check."""
    with memory.store._session() as session:
        schema_statement(session, "CREATE INDEX message_time FOR (m:Message) ON (m.timestamp)",
                         {})
        with pytest.raises(ClientError, match="already exists"):  # a name taken otherwise
            schema_statement(session, "CREATE INDEX message_time FOR (m:Message) ON (m.text)",
                             {})


def test_processes_opening_the_database_together_all_start(memory: Memory, cypher: Any) -> None:
    """Several processes (here threads, each with its own sessions) applying the schema at
    once, with indexes to build: every one of them starts (one API process of
    `graphmem serve --workers 2` crashed on a new database before)."""
    dropped = ("message_time", "session_owner", "sentence_owner")
    for name in dropped:
        cypher(f"DROP INDEX {name} IF EXISTS")
    start = threading.Barrier(4)

    def open_store() -> None:
        start.wait()
        memory.store.apply_schema(memory.embedder.name, memory.embedder.dimensions)

    with ThreadPoolExecutor(4) as pool:
        for done in [pool.submit(open_store) for _ in range(4)]:
            done.result()
    rows = cypher("SHOW INDEXES YIELD name, state RETURN name, state")
    states = {r["name"]: r["state"] for r in rows}
    assert all(states[name] == "ONLINE" for name in dropped), states


def test_vector_indexes_follow_the_quantization_setting(memory: Memory, cypher: Any,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """Vector indexes are built unquantised by default; with `vector_quantization` an index
    built from then on is quantised, and one built otherwise stays as built, with a warning."""
    def built() -> dict[str, bool | None]:
        rows = memory.store.run("queries/server/index_states")
        return {r["name"]: index_quantized(r) for r in rows if r["name"] in VECTOR_INDEXES}

    assert set(built().values()) == {False}
    settings = memory.store.settings
    memory.store.settings = settings.model_copy(update={"vector_quantization": True})
    try:
        with caplog.at_level(logging.WARNING, logger="graphmem.store"):
            memory.store.apply_schema(memory.embedder.name, memory.embedder.dimensions)
        assert "fact_vector" in caplog.text and "were built unquantised" in caplog.text
        assert set(built().values()) == {False}  # kept as built
        cypher("DROP INDEX fact_vector")
        memory.store.apply_schema(memory.embedder.name, memory.embedder.dimensions)
        assert built()["fact_vector"] is True
    finally:
        memory.store.settings = settings
        cypher("DROP INDEX fact_vector IF EXISTS")
        memory.store.apply_schema(memory.embedder.name, memory.embedder.dimensions)
    assert set(built().values()) == {False}
