"""Operations on the real app over the real Neo4j: /metrics, request ids, JSON logs, /readyz and
traces."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key, key_id
from graphmem.service import Memory
from tests.integration.conftest import KEYS, auth
from tests.integration.helpers import msg, owner

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def keyed(settings: Settings, **update: Any) -> Settings:
    keys = {hash_api_key(k): t for k, t in KEYS.items()}
    return settings.model_copy(update={"api_keys": keys, **update})


@pytest.fixture
def local(settings: Settings, memory: Memory) -> Iterator[TestClient]:
    """The app as a loopback client sees it (the `api` fixture's client is not loopback)."""
    with TestClient(create_app(keyed(settings), memory), client=("127.0.0.1", 50321)) as client:
        yield client


def scrape(client: TestClient) -> Samples:
    r = client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(r.text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_an_ingest_and_a_search(api: TestClient, local: TestClient) -> None:
    who = owner()
    before = scrape(local)
    batch = [msg(i, who, text=f"I moved to Lisbon in May. Sentence {i}.") for i in range(3)]
    assert api.post("/v1/messages", json={"messages": batch}, headers=auth()).status_code == 201
    assert api.post("/v1/messages", json={"messages": batch[:1]}, headers=auth()).status_code == 201
    r = api.post("/v1/search", json={"query": "where did they move?", "owner": who, "k": 3},
                 headers=auth())
    assert r.status_code == 200, r.text
    assert api.get(f"/v1/messages/{batch[0]['id']}", headers=auth()).status_code == 200
    after = scrape(local)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("graphmem_ingest_messages_created_total") == 3
    assert grew("graphmem_ingest_messages_duplicate_total") == 1
    assert grew("graphmem_ingest_units_embedded_total") == 6  # two sentences per message
    assert grew("graphmem_ingest_batches_total", outcome="ok") == 2
    assert grew("graphmem_ingest_duration_seconds_count") == 2
    assert grew("graphmem_search_requests_total", method="rrf_expand", units="messages",
                outcome="ok") == 1
    assert grew("graphmem_search_duration_seconds_count", method="rrf_expand",
                units="messages") == 1
    assert grew("graphmem_embedding_duration_seconds_count") >= 2  # the batch and the query
    assert grew("graphmem_embedding_call_texts_sum") >= 7
    assert grew("graphmem_http_requests_total", method="POST", route="/v1/messages",
                status="201") == 2
    assert grew("graphmem_http_request_duration_seconds_count", method="POST",
                route="/v1/search", status="200") == 1
    # the route template, never the raw path: no series per message id
    assert grew("graphmem_http_requests_total", method="GET",
                route="/v1/messages/{message_id:path}", status="200") == 1
    assert not any(batch[0]["id"] in str(labels) for _, labels in after)
    # the job queue, read from Neo4j at scrape time (ingest enqueued a formation job)
    assert value(after, "graphmem_jobs_read_ok") == 1
    states = {dict(labels)["state"] for name, labels in after if name == "graphmem_jobs"}
    assert states >= {"pending", "running", "done", "failed"}
    assert sum(v for (name, _), v in after.items() if name == "graphmem_jobs") >= 1
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_metrics_is_for_loopback_clients_and_can_be_turned_off(
    api: TestClient, settings: Settings, memory: Memory
) -> None:
    r = api.get("/metrics")  # the TestClient's default client is not a loopback address
    assert r.status_code == 403
    assert r.headers["content-type"].startswith("application/problem+json")
    with TestClient(create_app(keyed(settings, metrics_loopback_only=False), memory)) as c:
        assert "graphmem_http_requests_total" in c.get("/metrics").text
    off = keyed(settings, metrics_enabled=False)
    with TestClient(create_app(off, memory), client=("127.0.0.1", 50322)) as c:
        assert c.get("/metrics").status_code == 404


def test_request_id_round_trips_on_every_response(api: TestClient) -> None:
    rid = {"X-Request-ID": "trace-me-42"}
    responses = [
        api.get("/healthz", headers=rid),
        api.get("/readyz", headers=rid),
        api.get("/v1/messages/nope", headers=rid),  # 401: no key
        api.get("/v1/messages/nope", headers={**rid, **auth()}),  # 404
        api.post("/v1/messages", json={"messages": [{"owner": "x"}]},
                 headers={**rid, **auth()}),  # 422
        api.get("/no/such/route", headers=rid),
    ]
    assert [r.status_code for r in responses] == [200, 200, 401, 404, 422, 404]
    assert {r.headers["x-request-id"] for r in responses} == {"trace-me-42"}
    made = [api.get("/healthz", headers={"X-Request-ID": bad}).headers["x-request-id"]
            for bad in ("has spaces", "x" * 200)]
    made.append(api.get("/healthz").headers["x-request-id"])
    assert len(set(made)) == 3
    assert all(len(m) == 32 and int(m, 16) >= 0 for m in made)


def json_lines(text: str) -> list[dict[str, Any]]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return [json.loads(ln) for ln in lines]  # every line is one JSON object


def test_json_logs_one_line_per_request(
    settings: Settings, memory: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    who = owner()
    with TestClient(create_app(keyed(settings, log_format="json"), memory)) as client:
        capsys.readouterr()
        r = client.post("/v1/messages", json={"messages": [msg(0, who)]},
                        headers={**auth(), "X-Request-ID": "log-line-1"})
        assert r.status_code == 201
        client.get("/v1/jobs?limit=1", headers={**auth("key-b"), "X-Request-ID": "log-line-2"})
        lines = json_lines(capsys.readouterr().err)
        client.delete(f"/v1/owners/{who}", headers=auth())
    requests = {ln["request_id"]: ln for ln in lines if ln["logger"] == "graphmem.request"}
    first = requests["log-line-1"]
    assert (first["method"], first["route"], first["status"], first["tenant"]) == (
        "POST", "/v1/messages", 201, "tenant-a")
    assert first["duration_ms"] > 0
    assert first["level"] == "INFO"
    assert requests["log-line-2"]["tenant"] == "tenant-b"
    assert (first["key"], requests["log-line-2"]["key"]) == (key_id("key-a"), key_id("key-b"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_readyz_when_ready(api: TestClient) -> None:
    r = api.get("/readyz")
    assert r.status_code == 200, r.text
    assert r.json()["checks"] == {"embedding_model": "ok", "neo4j": "ok", "schema": "ok"}


def test_readyz_names_neo4j_when_it_is_down(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Neo4j that is not there (a free port; the session's Neo4j keeps running)."""
    port = _free_port()
    down = keyed(settings, neo4j_uri=f"bolt://127.0.0.1:{port}", log_format="json")
    with TestClient(create_app(down)) as client:
        capsys.readouterr()
        r = client.get("/readyz", headers={"X-Request-ID": "ready-1"})
        lines = json_lines(capsys.readouterr().err)
        assert client.get("/healthz").status_code == 503
    assert r.status_code == 503
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.headers["x-request-id"] == "ready-1"
    body = r.json()
    assert body["missing"] == ["neo4j"]
    assert body["detail"] == "neo4j: Neo4j is unreachable"
    assert body["checks"]["embedding_model"] == "ok"
    assert "127.0.0.1" not in r.text and str(port) not in r.text
    # the details are in the log, in lines that carry the request's id
    warning = [ln for ln in lines if ln["message"].startswith("readyz: neo4j")]
    assert warning and warning[0]["request_id"] == "ready-1"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Spans of this test, in memory (the process's SDK provider is installed once)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # later spans of the session are dropped


def test_traces_for_requests_ingest_and_search(
    settings: Settings, memory: Memory, spans: InMemorySpanExporter
) -> None:
    who = owner()
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = f"00-{trace_id}-00f067aa0ba902b7-01"
    with TestClient(create_app(keyed(settings, otel_enabled=True), memory)) as client:
        r = client.post("/v1/messages", json={"messages": [msg(0, who)]},
                        headers={**auth(), "traceparent": parent})
        assert r.status_code == 201
        r = client.post("/v1/search", json={"query": "message", "owner": who, "method": "rrf"},
                        headers=auth())
        assert r.status_code == 200
        client.delete(f"/v1/owners/{who}", headers=auth())
    finished = spans.get_finished_spans()
    by_name = {s.name: s for s in finished}
    assert [s.name for s in finished].count("POST /v1/messages") == 1  # one server span
    server = by_name["POST /v1/messages"]
    assert f"{server.context.trace_id:032x}" == trace_id  # the caller's trace continues
    assert server.attributes is not None
    assert server.attributes["http.response.status_code"] == 201
    assert server.attributes["http.route"] == "/v1/messages"
    assert len(str(server.attributes["graphmem.request_id"])) == 32
    ingest = by_name["graphmem.messages.ingest"]
    assert ingest.parent is not None
    assert ingest.context.trace_id == server.context.trace_id  # under the request's span
    assert ingest.attributes is not None and ingest.attributes["graphmem.created"] == 1
    search = by_name["graphmem.search"]
    assert search.attributes is not None and search.attributes["graphmem.method"] == "rrf"
    assert search.context.trace_id == by_name["POST /v1/search"].context.trace_id

