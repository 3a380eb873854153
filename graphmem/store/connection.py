"""The connection to Neo4j: the driver, named queries run with retries and error translation,
rows as plain values, and what the server's line allows. The store package is the only code that
talks to Neo4j, and this module the only one that holds the driver.

It knows the server's Neo4j line: from 2026.01 on, the vector indexes carry filter properties
(``schema/vector/filtered``) and a query ``X`` with a sibling ``X.search`` runs as that (Cypher 25
SEARCH, tenant and owner filtered inside the index); before, ``schema/vector/plain`` and the
over-fetching ``X``.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC
from functools import cache
from typing import Any, TypeVar

import neo4j
import numpy as np
from neo4j import GraphDatabase, ManagedTransaction, RoutingControl, Session
from neo4j import exceptions as nx
from neo4j.vector import Vector

from graphmem import cypher, metrics
from graphmem.config import Settings
from graphmem.errors import (
    Contended,
    GraphMemError,
    StoreBusy,
    StoreUnavailable,
)

Row = dict[str, Any]
T = TypeVar("T")
VECTOR_INDEXES = ("sentence_vector", "fact_vector", "episode_vector", "window_vector",
                  "case_vector", "skill_vector", "chunk_vector", "topic_vector")
SEARCH_SINCE = (2026, 1)
"""The first Neo4j version with vector search filtered inside the index (Cypher 25 SEARCH)."""
VECTOR_BOLT = (6, 0)
"""The first Bolt version with a vector value: a query's ``$vector`` goes as one block of bytes
instead of a list of floats the driver packs one by one (and the server unpacks)."""
# How long the driver retries a failed transaction (Neo4j unreachable, or aborted as transient),
# with backoff; a transient abort (a deadlock Neo4j broke, a lock wait that timed out) is then
# retried on until TRANSIENT_RETRY_S, before the request fails as StoreBusy. Contended writes on
# a busy machine outlast 5 s; an unreachable Neo4j should not keep a caller waiting for 15.
DRIVER_RETRY_S = 5.0
TRANSIENT_RETRY_S = 15.0
_VECTOR_DDL = re.compile(
    r"CREATE\s+VECTOR\s+INDEX\s+(\w+).*?\bON\s+\w+\.(\w+)\s+WITH\s+\[([^\]]*)\]", re.S | re.I)

log = logging.getLogger("graphmem.store")


def version_key(version: str) -> tuple[int, ...]:
    """``"2026.08.1"`` -> (2026, 8, 1); ``"5.26.30"`` -> (5, 26, 30); suffixes ignored."""
    return tuple(int(p) for p in re.findall(r"\d+", version.split("-", 1)[0])[:3])


@cache
def filters_in_index(version: str) -> bool:
    """Whether this Neo4j version filters vector search inside the index (asked before every
    query that has a SEARCH variant, so the answer is kept per version)."""
    return version_key(version)[:2] >= SEARCH_SINCE


def declared_properties(text: str) -> dict[str, set[str]]:
    """Index name -> the properties (vector and filters) a file of CREATE VECTOR INDEX ... WITH
    [...] statements declares."""
    return {name: {vector, *(p.strip().split(".")[-1] for p in extra.split(","))}
            for name, vector, extra in _VECTOR_DDL.findall(text)}


@cache
def _variant(name: str, suffix: str) -> str | None:
    """``<name><suffix>``, if that named query exists (looked up once per name)."""
    variant = f"{name}{suffix}"
    return variant if (cypher.CYPHER_DIR / f"{variant}.cypher").is_file() else None


def search_variant(name: str) -> str | None:
    """The Cypher 25 SEARCH variant of a named query (``<name>.search``), if it has one."""
    return _variant(name, ".search")


def exact_variant(name: str) -> str | None:
    """The exact scan of a vector query (``<name>_exact``: parameter ``k``, one row per hit),
    if it has one."""
    return _variant(name, "_exact")


def vectors_variant(name: str) -> str | None:
    """The variant of a write query that takes its rows' embeddings as vector values and stores
    them as lists of floats (``<name>.vectors``, Cypher 25), if it has one."""
    return _variant(name, ".vectors")


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Driver failures that mean 'Neo4j is not reachable now' become StoreUnavailable (503), and
    transient aborts that outlast the driver's retries StoreBusy (503: nothing was committed)."""
    try:
        with metrics.counting_neo4j_errors():  # by kind, for /metrics
            yield
    except GraphMemError:
        raise
    except (nx.ServiceUnavailable, nx.SessionExpired, OSError) as exc:
        raise StoreUnavailable(f"Neo4j is unreachable: {exc}") from exc
    except nx.AuthError as exc:
        raise StoreUnavailable(f"Neo4j refused the credentials: {exc}") from exc
    except nx.TransientError as exc:  # still transient after the driver's retries
        raise StoreBusy(f"Neo4j aborted the transaction as transient: {exc}") from exc
    except nx.DriverError as exc:
        raise StoreUnavailable(f"Neo4j driver error: {exc}") from exc


def _retrying_transient(attempt: Callable[[], T], limit_s: float = TRANSIENT_RETRY_S) -> T:
    """``attempt()``, again while it fails as transient and ``limit_s`` has not passed: after
    0.5-1 s when Neo4j aborted it (the driver's own retries stop after DRIVER_RETRY_S), after
    10-100 ms when the work itself found it raced concurrent writes (`Contended`)."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            return attempt()
        except nx.TransientError as exc:
            if time.monotonic() + 1.0 > deadline:
                raise
            log.info("transient abort outlasted the driver's retries; again: %s", exc.code)
            time.sleep(random.uniform(0.5, 1.0))
        except Contended as exc:
            if time.monotonic() + 0.1 > deadline:
                raise
            log.info("contended write; the transaction runs again: %s", exc)
            time.sleep(random.uniform(0.01, 0.1))


def native(value: Any) -> Any:
    """neo4j.time values to Python datetimes (UTC); everything else unchanged."""
    return _converted(value, strict=False)


_PLAIN = frozenset({str, int, float, bool, type(None)})


class _NotPlain(Exception):
    """A value `rows` leaves to `Record.data` (a node, a relationship, a point, ...)."""


def _converted(value: Any, strict: bool) -> Any:
    """`native`'s conversion; ``strict``: raise `_NotPlain` at a value that is neither plain,
    a list, a map nor a date-time (the caller then converts the record through `Record.data`)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    # a plain item is taken as it is, without a call: a search reads ~1,500 values
    if kind is list:
        return [v if type(v) in _PLAIN else _converted(v, strict) for v in value]
    if kind is dict:
        return {k: v if type(v) in _PLAIN else _converted(v, strict) for k, v in value.items()}
    if kind is neo4j.time.DateTime:
        return value.to_native().astimezone(UTC)
    if strict:
        raise _NotPlain
    return value


def rows(records: list[neo4j.Record]) -> list[Row]:
    """Records as rows, the same as ``[native(r.data()) for r in records]``: a record of plain
    values (strings, numbers, date-times, lists and maps of them: what the search queries
    return) is converted in one pass, about twice as fast; any other through `Record.data`."""
    out: list[Row] = []
    for r in records:
        try:
            out.append({k: _converted(v, True) for k, v in zip(r.keys(), r, strict=True)})
        except _NotPlain:
            out.append(native(r.data()))
    return out


ALREADY_BUILT = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"


def schema_statement(session: Session, statement: str, params: dict[str, Any]) -> None:
    """One schema command. An index or constraint that another process created in the meantime
    is what this one wanted: ``IF NOT EXISTS`` checks before it creates, so two processes
    opening a new database together (``graphmem serve --workers N``, a worker beside the API)
    both pass the check, and the later one's creation fails as equivalent to the earlier one's.
    That failure is success here; any other (a name taken by a different index) is raised."""
    try:
        session.run(statement, params).consume()
    except nx.ClientError as exc:
        if exc.code != ALREADY_BUILT:
            raise
        log.debug("schema: built meanwhile by another process: %s", exc.message)


def index_quantized(index: Row) -> bool | None:
    """Whether a vector index quantises its vectors, from its options (``vector.quantization
    .type`` on Neo4j 2026, ``vector.quantization.enabled`` on 5.x); None for another index."""
    config = (index.get("options") or {}).get("indexConfig") or {}
    kind = config.get("vector.quantization.type")
    if kind is not None:
        return str(kind).upper() != "NONE"
    enabled = config.get("vector.quantization.enabled")
    return None if enabled is None else bool(enabled)


class SearchFailed(Exception):
    """A SEARCH query failed on the server, and its caller asked to answer otherwise
    (``fallback=False``)."""


class Connection:
    """The driver and one database: named queries in their transactions, schema statements."""

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
            max_transaction_retry_time=DRIVER_RETRY_S,
            liveness_check_timeout=5.0,
            notifications_min_severity="OFF",
        )
        self._version: str | None = None
        self._vector_values: bool | None = None
        self._search_failures_logged: set[str] = set()

    def close(self) -> None:
        self._driver.close()

    def ping(self) -> None:
        with _translated():
            self._driver.verify_connectivity()

    # --- server line --------------------------------------------------------------------------
    @property
    def server_version(self) -> str:
        """The Neo4j server's version, read once (at the schema step, when the store opens)."""
        if self._version is None:
            row = self._execute("queries/server/server_version", False, {})[0]
            self._version = str(row["version"])
        return self._version

    @property
    def vector_filters(self) -> bool:
        """Whether vector search filters by tenant and owner inside the index (2026.01+)."""
        return filters_in_index(self.server_version)

    @property
    def vector_values(self) -> bool:
        """Whether the connection speaks Bolt 6 (Neo4j 2025.10+), which carries vector values;
        read once."""
        if self._vector_values is None:
            with _translated():
                bolt = self._driver.get_server_info().protocol_version
            self._vector_values = tuple(bolt) >= VECTOR_BOLT
        return self._vector_values

    def vector_rows(self, name: str, rows: list[Row], key: str = "embedding",
                    ) -> tuple[str, list[Row]]:
        """The query to write ``rows`` with, and the rows to send: where the connection carries
        vector values and the query has a ``<name>.vectors`` variant, each row's ``key`` (a list
        of floats) goes as one vector value of the same 64-bit numbers, which the variant stores
        as the same list (packing a list of 384 numbers cost the driver ~0.2 ms of CPU per row,
        and the server its decoding: ~9x what a vector value costs); else as they are."""
        variant = vectors_variant(name)
        if variant is None or not rows or not self.vector_values:
            return name, rows
        return variant, [{**r, key: Vector(np.asarray(r[key], dtype=np.float64))} for r in rows]

    # --- low level --------------------------------------------------------------------------
    def run(self, name: str, *, write: bool = False, plain: bool = False,
            fallback: bool = True, **params: Any) -> list[Row]:
        """Run one named query in its own transaction (retried on transient errors); its
        SEARCH variant on a server that filters vector search inside the index. A read's query
        vector (``vector``) goes as a vector value where the connection carries them (the same
        64-bit values: the same hits and scores). ``plain``: the query returns only plain
        values (strings, numbers, booleans, nulls, lists and maps of them; times as integers):
        its rows are taken as the driver gives them, not walked for date-times (`rows`; for
        the windows of 20 search hits, 150 us less). ``fallback``: a failed SEARCH is answered
        as `_search_failed` says; False: it raises `SearchFailed` (counted and logged the same)
        and the caller answers otherwise."""
        if not write and isinstance(params.get("vector"), list) and self.vector_values:
            params = {**params, "vector": Vector(np.asarray(params["vector"], dtype=np.float64))}
        if (variant := search_variant(name)) is not None and self.vector_filters:
            try:
                return self._execute(variant, write, params, plain)
            except nx.DatabaseError as exc:
                if not fallback:
                    self._note_search_failure(variant, params, exc)
                    raise SearchFailed(variant) from exc
                return self._search_failed(name, variant, write, params, exc)
        return self._execute(name, write, params, plain)

    def _search_failed(self, name: str, variant: str, write: bool, params: dict[str, Any],
                       exc: nx.DatabaseError) -> list[Row]:
        """A server-side failure of SEARCH ("Index 33554375 out of bounds for length 31"). Seen
        on 2026.08.1 after vectors were deleted from the index (until new ones were added),
        whenever SEARCH could not find its LIMIT of the filter's vectors: an owner with fewer
        (with none: at any LIMIT), or, in a large index, one whose vectors are rare. The
        exact scan of the query, where it has one, answers (it reads only the owner's
        vectors, the caller's ``k`` best, in the SEARCH query's shape, marked ``exact``:
        nothing more to fetch); else the over-fetching query. Logged once per query, counted
        every time."""
        exact = exact_variant(name)
        self._note_search_failure(variant, params, exc, exact or name)
        if exact is None:
            return self._execute(name, write, params)
        fetch = params["fetch"]
        rows = self._execute(exact, write, {**params, "k": min(params.get("k", fetch), fetch)})
        return [{"fetched": len(rows), "hits": rows, "exact": True}]

    def _note_search_failure(self, variant: str, params: dict[str, Any], exc: nx.DatabaseError,
                             instead: str = "its parts, each on its own") -> None:
        """Count a failed SEARCH query; log it once per query (then at debug level)."""
        metrics.SEARCH_FALLBACKS.labels(variant).inc()
        level = logging.DEBUG if variant in self._search_failures_logged else logging.WARNING
        self._search_failures_logged.add(variant)
        log.log(level, "%s failed on Neo4j %s (%s); answered instead by %s (logged once, counted "
                "in graphmem_vector_search_fallbacks_total)", variant, self.server_version,
                exc.message, instead)
        log.debug("failed SEARCH parameters: %s",
                  {k: v for k, v in params.items() if k != "vector"})

    def _execute(self, name: str, write: bool, params: dict[str, Any],
                 plain: bool = False) -> list[Row]:
        """A write runs in a managed write transaction (the driver retries it); a read in one
        auto-commit read transaction (`_read`). ``plain``: see `run`."""
        query = cypher.load(name)
        with _translated():
            if not write:
                found = _retrying_transient(lambda: self._read(query, params))
                if plain:
                    return [dict(zip(r.keys(), r, strict=True)) for r in found]
                return rows(found)
            records, _, _ = _retrying_transient(lambda: self._driver.execute_query(
                query, params, database_=self._db, routing_=RoutingControl.WRITE
            ))
        return rows(records)

    def _read(self, query: str, params: dict[str, Any]) -> list[neo4j.Record]:
        """``query`` as an auto-commit read transaction: one round trip (a managed one adds the
        COMMIT's; measured: search p50 16.4 -> 14.6 ms on LoCoMo dev). Still routed to a reader
        on a cluster and causally after this process's writes (shared bookmarks). Like the
        driver for managed transactions, an unreachable server is tried again, with backoff,
        for DRIVER_RETRY_S: a read is safe to repeat."""
        deadline, delay = time.monotonic() + DRIVER_RETRY_S, 0.1
        while True:
            try:
                with self._session(neo4j.READ_ACCESS) as session:
                    return list(session.run(query, params))
            except (nx.ServiceUnavailable, nx.SessionExpired):
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, 1.0)

    def run_statements(self, name: str, **params: Any) -> None:
        """Run each statement of a named file in its own auto-commit transaction (schema
        commands, which cannot share a transaction with other work). See `schema_statement`."""
        with _translated(), self._session() as session:
            for statement in cypher.statements(cypher.load(name)):
                schema_statement(session, statement, params)

    def write_tx(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        """Run ``work`` in one write transaction: all of it commits, or none of it."""
        def attempt() -> Any:
            with self._session() as session:
                return session.execute_write(work)

        with _translated():
            return _retrying_transient(attempt)

    def _session(self, access: str = neo4j.WRITE_ACCESS) -> Session:
        """A session sharing `execute_query`'s bookmarks: on a cluster, a read that follows a
        write of this process sees it (causal consistency), wherever either was routed."""
        return self._driver.session(database=self._db, default_access_mode=access,
                                    bookmark_manager=self._driver.execute_query_bookmark_manager)
