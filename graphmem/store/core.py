"""The driver, the schema, and error translation: the store package is the only code that talks
to Neo4j.

`Store` owns the driver and the schema; `Store.tenant(name)` hands out a `TenantStore` whose every
query is bound to that tenant, so isolation never depends on a caller remembering a filter.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import neo4j
from neo4j import GraphDatabase, ManagedTransaction, RoutingControl
from neo4j import exceptions as nx

from graphmem import cypher, metrics
from graphmem.config import Settings
from graphmem.errors import GraphMemError, SchemaMismatch, StoreUnavailable
from graphmem.store.tenant import TenantStore

Row = dict[str, Any]
VECTOR_INDEXES = ("sentence_vector", "fact_vector", "episode_vector", "window_vector",
                  "case_vector", "skill_vector")


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Driver failures that mean 'Neo4j is not reachable now' become StoreUnavailable (503)."""
    try:
        with metrics.counting_neo4j_errors():  # by kind, for /metrics
            yield
    except GraphMemError:
        raise
    except (nx.ServiceUnavailable, nx.SessionExpired, OSError) as exc:
        raise StoreUnavailable(f"Neo4j is unreachable: {exc}") from exc
    except nx.AuthError as exc:
        raise StoreUnavailable(f"Neo4j refused the credentials: {exc}") from exc
    except nx.DriverError as exc:
        raise StoreUnavailable(f"Neo4j driver error: {exc}") from exc


def native(value: Any) -> Any:
    """neo4j.time values to Python datetimes (UTC); everything else unchanged."""
    if isinstance(value, neo4j.time.DateTime):
        return value.to_native().astimezone(UTC)
    if isinstance(value, dict):
        return {k: native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [native(v) for v in value]
    return value


class Store:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        password = settings.resolved_password()
        auth = (settings.neo4j_user, password) if settings.neo4j_auth and password else None
        self._db = settings.neo4j_database
        self._driver = GraphDatabase.driver(
            settings.bolt_uri,
            auth=auth,
            connection_timeout=5.0,
            connection_acquisition_timeout=10.0,
            max_transaction_retry_time=5.0,
            liveness_check_timeout=5.0,
            notifications_min_severity="OFF",
        )

    def close(self) -> None:
        self._driver.close()

    def ping(self) -> None:
        with _translated():
            self._driver.verify_connectivity()

    # --- low level --------------------------------------------------------------------------
    def run(self, name: str, *, write: bool = False, **params: Any) -> list[Row]:
        """Run one named query in its own transaction (retried on transient errors)."""
        routing = RoutingControl.WRITE if write else RoutingControl.READ
        with _translated():
            records, _, _ = self._driver.execute_query(
                cypher.load(name), params, database_=self._db, routing_=routing
            )
        return [native(r.data()) for r in records]

    def run_statements(self, name: str, **params: Any) -> None:
        """Run each statement of a named file in its own auto-commit transaction (schema
        commands, which cannot share a transaction with other work)."""
        with _translated(), self._driver.session(database=self._db) as session:
            for statement in cypher.statements(cypher.load(name)):
                session.run(statement, **params).consume()

    def write_tx(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        """Run ``work`` in one write transaction: all of it commits, or none of it."""
        with _translated(), self._driver.session(database=self._db) as session:
            return session.execute_write(work)

    # --- schema -----------------------------------------------------------------------------
    def apply_schema(self, model: str, dimensions: int, timeout_s: float = 300.0) -> None:
        """Create constraints and indexes (idempotent), refuse a database built for another
        embedding model, and wait until every index is ONLINE."""
        if (built := self.embedding_meta()) is not None:
            _check_model(built, model, dimensions)
        for name in cypher.names("schema"):
            self.run_statements(name, dimensions=dimensions)
        meta = self.run(
            "queries/schema_meta", write=True, model=model, dimensions=dimensions,
            now=datetime.now(UTC),
        )[0]
        _check_model(meta, model, dimensions)
        for idx in self.run("queries/index_states"):
            config = (idx["options"] or {}).get("indexConfig", {})
            found = config.get("vector.dimensions")
            ours = idx["name"] in VECTOR_INDEXES
            if ours and found is not None and found != dimensions:
                raise SchemaMismatch(
                    f"vector index {idx['name']} has {found} dimensions, the embedder gives "
                    f"{dimensions}. Fix: DROP INDEX {idx['name']} and restart, then re-ingest."
                )
        self.await_online(timeout_s)

    def embedding_meta(self) -> Row | None:
        """Which embedding model built this database ({model, dimensions, created_at}); None on
        a new database."""
        rows = self.run("queries/schema_meta_read")
        return rows[0] if rows else None

    def await_online(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            states = self.run("queries/index_states")
            failed = [i["name"] for i in states if i["state"] == "FAILED"]
            if failed:
                raise SchemaMismatch(f"indexes FAILED to build: {failed}; see Neo4j's debug.log")
            pending = [i["name"] for i in states if i["state"] != "ONLINE"]
            if not pending:
                return
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"indexes not ONLINE after {timeout_s}s: {pending}")
            time.sleep(0.2)

    def tenant(self, tenant: str) -> TenantStore:
        return TenantStore(self, tenant)


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
