"""Unit tests of graphmem.metrics and the pure parts of api.observability (no database)."""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import neo4j.exceptions as nx
import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from graphmem import metrics
from graphmem.api import observability
from graphmem.api.auth import KeyRing
from graphmem.config import Settings
from graphmem.errors import Conflict, SchemaMismatch, StoreUnavailable
from graphmem.models import IngestReport, SearchRequest, SearchResult
from tests.support.fakes import Clock


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def delta(name: str, **labels: str) -> Callable[[], float]:
    """How much a sample grew since this call."""
    before = sample(name, **labels)
    return lambda: sample(name, **labels) - before


# --- Neo4j errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(("exc", "kind"), [
    (nx.ServiceUnavailable("down"), "unavailable"),
    (nx.SessionExpired("gone"), "unavailable"),
    (ConnectionRefusedError("refused"), "unavailable"),
    (nx.AuthError("no"), "auth"),
    (nx.TransientError("deadlock"), "transient"),
    (nx.ConstraintError("dup"), "client"),
    (nx.ClientError("bad"), "client"),
    (nx.DatabaseError("boom"), "database"),
    (nx.DriverError("odd"), "driver"),
])
def test_neo4j_error_kind(exc: BaseException, kind: str) -> None:
    assert metrics.neo4j_error_kind(exc) == kind


def test_not_a_neo4j_error_has_no_kind() -> None:
    assert metrics.neo4j_error_kind(Conflict("x")) is None
    assert metrics.neo4j_error_kind(ValueError("x")) is None


def test_counting_neo4j_errors_counts_and_reraises() -> None:
    grew = delta("graphmem_neo4j_errors_total", kind="transient")
    with pytest.raises(nx.TransientError), metrics.counting_neo4j_errors():
        raise nx.TransientError("deadlock")
    with pytest.raises(Conflict), metrics.counting_neo4j_errors():
        raise Conflict("graphmem's own error is not a Neo4j error")
    assert grew() == 1


# --- ingest, search, embedding --------------------------------------------------------------------
def test_observe_ingest_counts_a_committed_batch() -> None:
    created, dups = delta("graphmem_ingest_messages_created_total"), delta(
        "graphmem_ingest_messages_duplicate_total")
    ok, err = delta("graphmem_ingest_batches_total", outcome="ok"), delta(
        "graphmem_ingest_batches_total", outcome="error")
    timed = delta("graphmem_ingest_duration_seconds_count")

    @metrics.observe_ingest
    def ingest(tenant: str, n: int) -> IngestReport:
        return IngestReport(ids=[str(i) for i in range(n)], created=n - 1, duplicates=1)

    assert ingest("t", 3).created == 2
    assert (created(), dups(), ok(), err(), timed()) == (2, 1, 1, 0, 1)


def test_observe_ingest_counts_a_failed_batch_and_reraises() -> None:
    err, created = delta("graphmem_ingest_batches_total", outcome="error"), delta(
        "graphmem_ingest_messages_created_total")

    @metrics.observe_ingest
    def ingest() -> IngestReport:
        raise Conflict("same id, other content")

    with pytest.raises(Conflict):
        ingest()
    assert (err(), created()) == (1, 0)


def test_observe_ingest_many_counts_each_batch_as_it_commits() -> None:
    ok, created = delta("graphmem_ingest_batches_total", outcome="ok"), delta(
        "graphmem_ingest_messages_created_total")

    @metrics.observe_ingest_many
    def many() -> Any:
        yield IngestReport(ids=["a"], created=1, duplicates=0)
        yield IngestReport(ids=["b", "c"], created=2, duplicates=0)

    reports = many()
    assert ok() == 0  # nothing happens before the caller iterates
    assert [r.created for r in reports] == [1, 2]
    assert (ok(), created()) == (2, 3)


def test_observe_search_labels_by_method_and_units() -> None:
    req = SearchRequest(query="where?", owner="alice", method="vector", units="messages")
    ok = delta("graphmem_search_requests_total", method="vector", units="messages", outcome="ok")
    err = delta("graphmem_search_requests_total", method="vector", units="messages",
                outcome="error")
    timed = delta("graphmem_search_duration_seconds_count", method="vector", units="messages")
    calls = 0

    @metrics.observe_search
    def search(tenant: str, req: SearchRequest) -> SearchResult:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise StoreUnavailable("down")
        return SearchResult.model_construct(query=req.query, method=req.method, hits=[])

    search("t", req=req)  # found among keyword arguments too
    with pytest.raises(StoreUnavailable):
        search("t", req)
    assert (ok(), err(), timed()) == (1, 1, 2)


def test_observe_embedding_times_calls_with_texts_only() -> None:
    calls, texts = delta("graphmem_embedding_duration_seconds_count"), delta(
        "graphmem_embedding_call_texts_sum")

    class Fake:
        @metrics.observe_embedding
        def embed(self, batch: list[str]) -> list[list[float]]:
            return [[1.0] for _ in batch]

    Fake().embed(["a", "b", "c"])
    Fake().embed([])
    assert (calls(), texts()) == (1, 3)


# --- the job-queue gauge ------------------------------------------------------------------------
def test_job_counts_are_cached_for_the_ttl() -> None:
    reads: list[int] = []
    clock = Clock()

    def read() -> dict[str, int]:
        reads.append(1)
        return {"pending": len(reads), "failed": 2}

    collector = metrics.JobQueueCollector(read, ttl_s=5.0, clock=clock)
    assert collector.counts() == {"pending": 1, "failed": 2}
    clock.now += 4.9
    assert collector.counts() == {"pending": 1, "failed": 2}
    clock.now += 0.2
    assert collector.counts() == {"pending": 2, "failed": 2}
    assert len(reads) == 2


def test_job_gauge_lists_every_state_and_read_ok() -> None:
    registry = CollectorRegistry()
    registry.register(metrics.JobQueueCollector(lambda: {"pending": 3}, clock=Clock()))
    text = generate_latest(registry).decode()
    assert 'graphmem_jobs{state="pending"} 3.0' in text
    assert 'graphmem_jobs{state="failed"} 0.0' in text
    assert "graphmem_jobs_read_ok 1.0" in text


def test_job_gauge_left_out_when_the_read_fails() -> None:
    def read() -> dict[str, int]:
        raise StoreUnavailable("down")

    registry = CollectorRegistry()
    registry.register(metrics.JobQueueCollector(read, clock=Clock()))
    text = generate_latest(registry).decode()
    assert "graphmem_jobs_read_ok 0.0" in text
    assert "graphmem_jobs{" not in text


def test_a_slow_read_never_holds_the_scrape_up() -> None:
    release = threading.Event()
    reads: list[int] = []

    def read() -> dict[str, int]:
        reads.append(1)
        release.wait(10)
        return {"pending": 7}

    collector = metrics.JobQueueCollector(read, wait_s=0.05)
    assert collector.counts() is None  # late: left out of this scrape
    assert collector.counts() is None  # still the same read: no second one started
    assert len(reads) == 1
    release.set()
    for _ in range(100):
        if (found := collector.counts()) is not None:
            break
    assert found == {"pending": 7}


# --- request ids and logs -----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["abc-123", "0af7651916cd43dd8448eb211c80319c", "a.b:c_d"])
def test_a_short_safe_request_id_is_kept(value: str) -> None:
    assert observability.incoming_id(value) == value


@pytest.mark.parametrize("value", [None, "", "has space", "x" * 65, "new\nline", "quo\"te",
                                   "ünï"])
def test_other_request_ids_are_replaced(value: str | None) -> None:
    made = observability.incoming_id(value)
    assert made != value
    assert len(made) == 32
    assert int(made, 16) >= 0


def test_json_log_lines_carry_request_id_and_extra_fields() -> None:
    record = logging.LogRecord("graphmem.request", logging.INFO, __file__, 1, "%s %s", ("GET",
                               "/v1/search"), None)
    record.request_id = "rid-1"
    record.route = "/v1/search"
    record.status = 200
    record.tenant = None
    line = json.loads(observability.JsonFormatter().format(record))
    assert line["message"] == "GET /v1/search"
    assert line["request_id"] == "rid-1"
    assert (line["route"], line["status"], line["tenant"]) == ("/v1/search", 200, None)
    assert line["level"] == "INFO"
    assert datetime.fromisoformat(line["ts"]).tzinfo == UTC


def test_json_log_lines_include_the_exception() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    line = json.loads(observability.JsonFormatter().format(record))
    assert "ValueError: boom" in line["exc"]


def test_configure_logging_is_idempotent_and_checks_the_level() -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        observability.configure_logging(Settings(log_format="json", log_level="debug"))
        observability.configure_logging(Settings(log_format="text", log_level="WARNING"))
        ours = [h for h in root.handlers if isinstance(h, observability._Handler)]
        assert len(ours) == 1
        assert root.level == logging.WARNING
        with pytest.raises(ValueError, match="GRAPHMEM_LOG_LEVEL"):
            observability.configure_logging(Settings(log_level="loud"))
    finally:
        for h in [h for h in root.handlers if h not in before]:
            root.removeHandler(h)


# --- readiness ----------------------------------------------------------------------------------
class FakeStore:
    def __init__(self, reachable: bool = True, states: list[str] | None = None) -> None:
        self.reachable = reachable
        self.states = states if states is not None else ["ONLINE", "ONLINE"]

    def ping(self) -> None:
        if not self.reachable:
            raise StoreUnavailable("Neo4j is unreachable: Couldn't connect to 10.1.2.3:7687")

    def run(self, name: str, **_: Any) -> list[dict[str, Any]]:
        assert name == "queries/server/index_states"
        return [{"name": f"idx{i}", "state": s} for i, s in enumerate(self.states)]


class FakeMemory:
    """What readiness asks of `Memory`: ping and index states."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store

    def ping(self) -> None:
        self.store.ping()

    def index_states(self) -> dict[str, str]:
        return {r["name"]: r["state"] for r in self.store.run("queries/server/index_states")}


class FakeRuntime:
    def __init__(self, memory: FakeMemory | None, ready: bool = True,
                 apply: Exception | None = None) -> None:
        self.memory = memory
        self.ready = ready
        self.apply = apply

    def ready_memory(self) -> Any:
        if self.apply is not None:
            raise self.apply
        self.ready = True
        return self.memory


def check(runtime: FakeRuntime) -> tuple[dict[str, str], dict[str, str]]:
    return observability.readiness(runtime)  # type: ignore[arg-type]


def test_ready_when_every_dependency_is_there() -> None:
    checks, missing = check(FakeRuntime(FakeMemory(FakeStore())))
    assert missing == {}
    assert checks == {"embedding_model": "ok", "neo4j": "ok", "schema": "ok"}


def test_first_readiness_check_applies_the_schema() -> None:
    runtime = FakeRuntime(FakeMemory(FakeStore()), ready=False)
    assert check(runtime)[1] == {}
    assert runtime.ready


def test_model_not_loaded() -> None:
    checks, missing = check(FakeRuntime(None))
    assert list(missing) == ["embedding_model"]
    assert checks["embedding_model"] == "missing"


def test_neo4j_unreachable_without_its_address() -> None:
    checks, missing = check(FakeRuntime(FakeMemory(FakeStore(reachable=False))))
    assert list(missing) == ["neo4j"]
    assert "10.1.2.3" not in json.dumps([checks, missing])
    assert "7687" not in json.dumps([checks, missing])
    assert checks["schema"] == "not checked"


def test_indexes_not_online() -> None:
    _, missing = check(FakeRuntime(FakeMemory(FakeStore(states=["ONLINE", "POPULATING"]))))
    assert missing == {"schema": "indexes not ONLINE: idx1"}


@pytest.mark.parametrize("error", [SchemaMismatch("built with another model"),
                                   StoreUnavailable("indexes not ONLINE after 300s")])
def test_schema_not_applied(error: Exception) -> None:
    _, missing = check(FakeRuntime(FakeMemory(FakeStore()), ready=False, apply=error))
    assert list(missing) == ["schema"]


# --- traces -------------------------------------------------------------------------------------
def test_tracing_without_the_packages_is_a_clear_start_up_error(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(RuntimeError, match=r"graphmem\[otel\]"):
        observability.enable_tracing()


# --- the middleware on a small app (no database) ----------------------------------------------
def test_middleware_labels_are_bounded() -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    app = FastAPI()

    @app.get("/items/{item_id}")
    def item(item_id: str) -> dict[str, str]:
        return {"id": item_id}

    app.add_middleware(observability.RequestObserver, keys=KeyRing(Settings()))
    templ = delta("graphmem_http_requests_total", method="GET", route="/items/{item_id}",
                  status="200")
    unmatched = delta("graphmem_http_requests_total", method="GET", route="unmatched",
                      status="404")
    other = delta("graphmem_http_requests_total", method="other", route="/items/{item_id}",
                  status="405")
    with TestClient(app) as client:
        for i in range(3):
            r = client.get(f"/items/id-{i}", headers={"X-Request-ID": f"rid-{i}"})
            assert r.headers["x-request-id"] == f"rid-{i}"
        assert client.get("/elsewhere").headers["x-request-id"]
        assert client.request("BREW", "/items/x").status_code == 405
    assert (templ(), unmatched(), other()) == (3, 1, 1)
