"""The library's Prometheus instruments and trace spans: ingest, search, embedding, Neo4j errors,
and the job-queue gauge read at scrape time.

Instruments live in prometheus_client's default registry (one per process); the API serves them
at ``/metrics``. Library code records through the decorators and helpers below, one line at each
instrumentation point. Spans go to OpenTelemetry when ``opentelemetry-api`` is importable; they
cost next to nothing until an SDK tracer provider is installed (``GRAPHMEM_OTEL_ENABLED``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ParamSpec, TypeVar

from prometheus_client import Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from graphmem.models import IngestReport, SearchRequest, SearchResult

try:
    from opentelemetry import trace as _otel_trace
except ImportError:  # pragma: no cover - opentelemetry-api comes with fastapi today
    _otel_trace = None  # type: ignore[assignment]

disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series
P = ParamSpec("P")
R = TypeVar("R")

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
TEXT_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096)

INGEST_BATCHES = Counter(
    "graphmem_ingest_batches", "Ingest batches, by outcome (ok: committed; error: nothing "
    "written)", ["outcome"])
INGEST_CREATED = Counter("graphmem_ingest_messages_created", "Messages stored by ingest")
INGEST_DUPLICATES = Counter(
    "graphmem_ingest_messages_duplicate", "Messages sent again (already stored, not written)")
INGEST_UNITS = Counter(
    "graphmem_ingest_units_embedded", "Sentence units embedded for new messages")
INGEST_SECONDS = Histogram(
    "graphmem_ingest_duration_seconds", "Time of one ingest batch (embedding and commit)",
    buckets=LATENCY_BUCKETS)
SEARCHES = Counter(
    "graphmem_search_requests", "Searches, by method, units and outcome",
    ["method", "units", "outcome"])
SEARCH_SECONDS = Histogram(
    "graphmem_search_duration_seconds", "Time of one search, by method and units",
    ["method", "units"], buckets=LATENCY_BUCKETS)
EMBED_SECONDS = Histogram(
    "graphmem_embedding_duration_seconds", "Time of one embedding call (waiting for the model "
    "included)", buckets=LATENCY_BUCKETS)
EMBED_TEXTS = Histogram(
    "graphmem_embedding_call_texts", "Texts per embedding call", buckets=TEXT_BUCKETS)
NEO4J_ERRORS = Counter(
    "graphmem_neo4j_errors", "Neo4j failures seen by the store, by kind", ["kind"])
SEARCH_FALLBACKS = Counter(
    "graphmem_vector_search_fallbacks", "Vector searches whose SEARCH query the server failed "
    "on, answered by the query's exact scan instead", ["query"])
EXTRACTION_DROPPED = Counter(
    "graphmem_extraction_dropped", "Facts and profile operations proposed by the LLM and "
    "dropped before writing, by reason", ["reason"])

# Most specific first: the first class of an exception's MRO found here names its kind.
_NEO4J_KINDS = {
    "ServiceUnavailable": "unavailable", "SessionExpired": "unavailable",
    "AuthError": "auth", "TransientError": "transient", "ClientError": "client",
    "DatabaseError": "database", "Neo4jError": "server", "DriverError": "driver",
    "OSError": "unavailable",
}


def neo4j_error_kind(exc: BaseException) -> str | None:
    """``unavailable``, ``auth``, ``transient``, ``client``, ``database``, ``server`` or
    ``driver`` for a driver exception (by its class names, so this module needs no driver);
    None for anything else (graphmem's own errors, a bug in the caller's work function)."""
    for cls in type(exc).__mro__:
        kind = _NEO4J_KINDS.get(cls.__name__)
        if kind is not None:
            return kind
    return None


@contextlib.contextmanager
def counting_neo4j_errors() -> Iterator[None]:
    """Count a driver failure by kind, then let it go on to be translated."""
    try:
        yield
    except Exception as exc:
        if (kind := neo4j_error_kind(exc)) is not None:
            NEO4J_ERRORS.labels(kind).inc()
        raise


def span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[Any]:
    """A trace span (the current one's child), or nothing when OpenTelemetry is absent."""
    if _otel_trace is None:  # pragma: no cover
        return contextlib.nullcontext()
    return _otel_trace.get_tracer("graphmem").start_as_current_span(name, attributes=attributes)


def _set(current: Any, **attributes: Any) -> None:
    if current is not None and hasattr(current, "set_attributes"):
        current.set_attributes(attributes)


def record_ingest(report: IngestReport) -> None:
    INGEST_BATCHES.labels("ok").inc()
    INGEST_CREATED.inc(report.created)
    INGEST_DUPLICATES.inc(report.duplicates)


def observe_ingest(fn: Callable[P, IngestReport]) -> Callable[P, IngestReport]:
    """For `Memory.ingest`: batch counts, messages created / duplicate, latency, a span."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> IngestReport:
        start = time.perf_counter()
        with span("graphmem.messages.ingest") as current:
            try:
                report = fn(*args, **kwargs)
            except Exception:
                INGEST_BATCHES.labels("error").inc()
                raise
            finally:
                INGEST_SECONDS.observe(time.perf_counter() - start)
            record_ingest(report)
            _set(current, **{"graphmem.messages": len(report.ids),
                             "graphmem.created": report.created,
                             "graphmem.duplicates": report.duplicates})
        return report

    return wrapper


def observe_ingest_many(
    fn: Callable[P, Iterator[IngestReport]]
) -> Callable[P, Iterator[IngestReport]]:
    """For `Memory.ingest_many`: the counts of `observe_ingest`, per batch as it commits."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Iterator[IngestReport]:
        return _counted(fn(*args, **kwargs))

    return wrapper


def _counted(reports: Iterable[IngestReport]) -> Iterator[IngestReport]:
    try:
        for report in reports:
            record_ingest(report)
            yield report
    except Exception:
        INGEST_BATCHES.labels("error").inc()
        raise


def observe_search(fn: Callable[P, SearchResult]) -> Callable[P, SearchResult]:
    """For `Memory.search`: counts and latency by method and units, a span."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> SearchResult:
        req = next((a for a in (*args, *kwargs.values()) if isinstance(a, SearchRequest)), None)
        method = str(req.method) if req else "unknown"
        units = str(req.units) if req else "unknown"
        start = time.perf_counter()
        outcome = "error"
        with span("graphmem.search", **{"graphmem.method": method,
                                        "graphmem.units": units}) as current:
            try:
                result = fn(*args, **kwargs)
                outcome = "ok"
            finally:
                SEARCHES.labels(method, units, outcome).inc()
                SEARCH_SECONDS.labels(method, units).observe(time.perf_counter() - start)
            _set(current, **{"graphmem.hits": len(result.hits)})
        return result

    return wrapper


def observe_embedding(fn: Callable[P, list[list[float]]]) -> Callable[P, list[list[float]]]:
    """For an embedder's ``embed(self, texts)``: time per call and texts per call."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> list[list[float]]:
        start = time.perf_counter()
        vectors = fn(*args, **kwargs)
        if vectors:
            EMBED_SECONDS.observe(time.perf_counter() - start)
            EMBED_TEXTS.observe(len(vectors))
        return vectors

    return wrapper


class JobQueueCollector(Collector):
    """``graphmem_jobs{state}``: jobs per state over every tenant, read at scrape time through
    ``read`` and kept ``ttl_s`` seconds, so frequent scrapes cost one query per period. The read
    runs in a background thread (one at a time) and a scrape waits for it at most ``wait_s``:
    a slow or unreachable Neo4j never holds a scrape up. When the read failed or is late, the
    gauge is left out and ``graphmem_jobs_read_ok`` is 0."""

    STATES = ("pending", "running", "done", "failed")

    def __init__(self, read: Callable[[], Mapping[str, int]], ttl_s: float = 5.0,
                 wait_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._ttl_s = ttl_s
        self._wait_s = wait_s
        self._clock = clock
        self._lock = threading.Lock()
        self._value: dict[str, int] | None = None
        self._read_at: float | None = None
        self._reading: threading.Event | None = None

    def _fresh(self) -> bool:
        return self._read_at is not None and self._clock() - self._read_at < self._ttl_s

    def counts(self) -> dict[str, int] | None:
        with self._lock:
            if self._fresh():
                return self._value
            if self._reading is None:
                self._reading = threading.Event()
                threading.Thread(target=self._refresh, args=(self._reading,), daemon=True,
                                 name="graphmem-job-counts").start()
            reading = self._reading
        reading.wait(self._wait_s)
        with self._lock:
            return self._value if reading.is_set() else None

    def _refresh(self, done: threading.Event) -> None:
        try:
            value: dict[str, int] | None = dict(self._read())
        except Exception:  # counted by the store as a Neo4j error; scrapes go on
            value = None
        with self._lock:
            self._value, self._read_at, self._reading = value, self._clock(), None
        done.set()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        counts = self.counts()
        ok = GaugeMetricFamily("graphmem_jobs_read_ok",
                               "1 when the job counts below were read from Neo4j")
        ok.add_metric([], 0 if counts is None else 1)
        yield ok
        if counts is None:
            return
        gauge = GaugeMetricFamily(
            "graphmem_jobs", "Jobs per state, all tenants (read at scrape time, cached a few "
            "seconds; capped per state by the query)", labels=["state"])
        for state in sorted({*self.STATES, *counts}):
            gauge.add_metric([state], counts.get(state, 0))
        yield gauge


def record_extraction(summary: Mapping[str, Any]) -> None:
    """One fact extraction's drops (`ExtractionReport.summary`), counted by reason."""
    for reason, n in summary.get("dropped", {}).items():
        if n:
            EXTRACTION_DROPPED.labels(reason).inc(n)
