"""The schema of the database: constraints and indexes applied in order (idempotent, safe when
two processes open a new database together), the migrations of databases built by older
versions (`scope`, `metadata`, `topic_index`), the vector indexes of the server's line, the
embedding model a database was built for, and the wait until every index is ONLINE."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from graphmem import cypher
from graphmem.errors import SchemaMismatch, StoreUnavailable
from graphmem.store import metadata, scope, topic_index
from graphmem.store.connection import (
    VECTOR_INDEXES,
    Connection,
    Row,
    declared_properties,
    index_quantized,
)

log = logging.getLogger("graphmem.store")


def apply_schema(conn: Connection, model: str, dimensions: int, timeout_s: float = 300.0) -> None:
    """Create constraints and indexes (idempotent), refuse a database built for another
    embedding model, and wait until every index is ONLINE."""
    conn.ping()  # an unreachable Neo4j fails here at once, not after the query retries
    if (built := embedding_meta(conn)) is not None:
        _check_model(built, model, dimensions)
    existing = conn.run("queries/server/index_states")
    # The uniqueness constraints before anything MERGEs a node: two processes starting on a
    # new database would otherwise both create the migrations' GraphMeta marker, and the
    # constraint could never be made after.
    conn.run_statements("schema/01_constraints", dimensions=dimensions)
    scope.migrate(conn, existing)  # fulltext indexes built before the scope: backfill, drop
    metadata.migrate(conn)  # messages stored before metadata filters: their pairs
    topic_index.migrate(conn)  # topics written before the label index: scope, search_text
    for name in cypher.names("schema"):
        conn.run_statements(name, dimensions=dimensions)
    _apply_vector_schema(conn, dimensions, existing)
    meta = conn.run(
        "queries/server/schema_meta", write=True, model=model, dimensions=dimensions,
        now=datetime.now(UTC),
    )[0]
    _check_model(meta, model, dimensions)
    for idx in conn.run("queries/server/index_states"):
        config = (idx["options"] or {}).get("indexConfig", {})
        found = config.get("vector.dimensions")
        ours = idx["name"] in VECTOR_INDEXES
        if ours and found is not None and found != dimensions:
            raise SchemaMismatch(
                f"vector index {idx['name']} has {found} dimensions, the embedder gives "
                f"{dimensions}. Fix: DROP INDEX {idx['name']} and restart, then re-ingest."
            )
    await_online(conn, timeout_s)


def _apply_vector_schema(conn: Connection, dimensions: int, existing: list[Row]) -> None:
    """The vector indexes of the server's line. From 2026.01 on, an index of ours that lacks
    the properties ``schema/vector/filtered`` declares (built on Neo4j 5, or by an older
    graphmem) is dropped first, so it is built again with them. ``existing``: the index
    states read before the schema step (the schema files create no vector index). An index
    is built quantised or not as ``vector_quantization`` says; one built otherwise is kept
    (rebuilding a large one takes its recall away for minutes), with a warning."""
    quantized = conn.settings.vector_quantization
    rebuilt: set[str] = set()  # dropped below, so built again as the setting says
    if conn.vector_filters:
        wanted = declared_properties(cypher.load("schema/vector/filtered"))
        rebuilt = {i["name"] for i in existing if i["name"] in wanted
                   and set(i["properties"] or ()) != wanted[i["name"]]}
    other = sorted(i["name"] for i in existing if i["name"] in VECTOR_INDEXES
                   and i["name"] not in rebuilt
                   and index_quantized(i) not in (None, quantized))
    if other:
        log.warning("vector indexes %s were built %s; GRAPHMEM_VECTOR_QUANTIZATION=%s applies "
                    "to indexes built from now on (DROP INDEX one and restart to rebuild it)",
                    ", ".join(other), "unquantised" if quantized else "quantised",
                    str(quantized).lower())
    if not conn.vector_filters:
        conn.run_statements("schema/vector/plain", dimensions=dimensions, quantized=quantized)
        return
    for name in sorted(rebuilt):
        conn.run_statements("queries/server/drop_vector_index", index=name)
    conn.run_statements("schema/vector/filtered", dimensions=dimensions, quantized=quantized)


def embedding_meta(conn: Connection) -> Row | None:
    """Which embedding model built this database ({model, dimensions, created_at}); None on
    a new database."""
    rows = conn.run("queries/server/schema_meta_read")
    return rows[0] if rows else None


def await_online(conn: Connection, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        states = conn.run("queries/server/index_states")
        failed = [i["name"] for i in states if i["state"] == "FAILED"]
        if failed:
            raise SchemaMismatch(f"indexes FAILED to build: {failed}; see Neo4j's debug.log")
        pending = [i["name"] for i in states if i["state"] != "ONLINE"]
        if not pending:
            return
        if time.monotonic() > deadline:
            raise StoreUnavailable(f"indexes not ONLINE after {timeout_s}s: {pending}")
        time.sleep(0.2)


def _check_model(meta: Row, model: str, dimensions: int) -> None:
    if meta["model"] != model or meta["dimensions"] != dimensions:
        raise SchemaMismatch(
            f"this database was built with embedding model {meta['model']!r} "
            f"({meta['dimensions']} dimensions) but graphmem is configured with {model!r} "
            f"({dimensions} dimensions). Fix: set GRAPHMEM_EMBEDDING_MODEL (and "
            "GRAPHMEM_EMBEDDING_QUANTIZE for a '+int8' name, with GRAPHMEM_EMBEDDING_BACKEND=torch "
            "for '+int8-torch') back to what built it, or move the database to the configured "
            "model with `graphmem schema reembed`, or point "
            "graphmem at a fresh database (GRAPHMEM_NEO4J_DATABASE / a new instance dir) and "
            "ingest again."
        )
