"""The HTTP edge over a real uvicorn server: every error is a problem+json body, an unexpected
error leaves the keep-alive connection usable, the key is checked before the body is read, and
a 503 does not reveal where Neo4j is.

The app runs over `Stub`, a stand-in for `graphmem.Memory` (these tests are about the edge, not
the store), except the 503 test, whose store is a real one pointed at a closed port.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from graphmem.access import Access
from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.models import Message
from graphmem.store.core import Store
from graphmem.tenant_memory import TenantMemory
from tests.support.live_server import free_port, serve

KEY = {"Authorization": "Bearer edge-key"}


class StubOps:
    """A tenant's operations stand-in: `get_message` raises like an unforeseen bug; a session
    is empty."""

    def get_message(self, id_: str) -> Message:
        raise RuntimeError("an unforeseen bug")

    def session_messages(self, *args: Any) -> list[Message]:
        return []


class Stub:
    """A Memory stand-in whose tenants' messages are `StubOps`."""

    store = Store.__new__(Store)  # never connected: the stub's operations read no store

    def ensure_schema(self) -> None:
        pass

    def for_tenant(self, name: str, access: Access | None = None,
                   caller: str | None = None) -> TenantMemory:
        tm = TenantMemory(self, name, access, caller)  # type: ignore[arg-type]
        tm.messages._ops = StubOps()  # type: ignore[assignment]
        return tm


def edge_settings(**update: Any) -> Settings:
    return Settings(api_keys={hash_api_key("edge-key"): "edge"}, **update)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve(create_app(edge_settings(), Stub())) as url:  # type: ignore[arg-type]
        yield url


def local_port(response: httpx.Response) -> int:
    """The client-side port of the connection that carried the response."""
    port: int = response.extensions["network_stream"].get_extra_info("client_addr")[1]
    return port


def assert_problem(r: httpx.Response, status: int, field: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json", r.headers
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and body["detail"], body
    if field is not None:
        assert body["field"] == field, body
    return body


def test_an_unexpected_error_is_a_500_problem_and_the_connection_stays_open(
    base_url: str,
) -> None:
    with httpx.Client(base_url=base_url, headers=KEY) as client:
        first = client.get("/v1/messages/m1")
        body = assert_problem(first, 500)
        assert "unforeseen" not in body["detail"]  # the exception stays in the server log
        assert first.headers.get("connection") != "close"
        second = client.get("/v1/sessions/s1/messages")
        assert second.status_code == 200 and second.json() == []
        assert local_port(second) == local_port(first)  # the same keep-alive connection


def test_a_chunked_body_over_the_limit_is_413(base_url: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"messages": ["'
        for _ in range(21):
            yield b"x" * 1_000_000
        yield b'"]}'

    with httpx.Client(base_url=base_url, headers=KEY, timeout=60) as client:
        r = client.post("/v1/messages", content=chunks(),
                        headers={"Content-Type": "application/json"})
        assert "content-length" not in r.request.headers  # sent chunked
        assert_problem(r, 413, "body")
        after = client.get("/v1/sessions/s1/messages")
        assert after.status_code == 200
        assert local_port(after) == local_port(r)


@pytest.mark.parametrize(("body", "words"), [
    (b'{"messages": [', "not valid JSON"),
    (b'{"messages": ["\xff\xfe"]}', "UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
])
def test_unreadable_bodies_are_400_problems(base_url: str, body: bytes, words: str) -> None:
    r = httpx.post(f"{base_url}/v1/messages", content=body,
                   headers={**KEY, "Content-Type": "application/json"})
    assert words in assert_problem(r, 400, "body")["detail"]


def test_unknown_routes_and_methods_are_problems(base_url: str) -> None:
    assert_problem(httpx.get(f"{base_url}/nope"), 404)
    assert_problem(httpx.get(f"{base_url}/v1/nope", headers=KEY), 404)
    assert_problem(httpx.get(f"{base_url}/v1/nope"), 401)  # no key: nothing about routes
    r = httpx.post(f"{base_url}/healthz")
    assert_problem(r, 405)
    assert r.headers["allow"] == "GET"


@pytest.mark.parametrize("headers", [
    [], [(b"authorization", b"Bearer wrong")], [(b"authorization", b"Basic a2V5LWE=")],
])
def test_the_key_is_checked_before_the_body_is_read(headers: list[tuple[bytes, bytes]]) -> None:
    """Straight through ASGI, to see which messages the app asks for: none of the body."""
    app = create_app(edge_settings(), Stub())  # type: ignore[arg-type]
    asked: list[str] = []
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        asked.append("receive")
        return {"type": "http.request", "body": b"x" * 1000, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/v1/messages", "raw_path": b"/v1/messages",
        "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", b"900000000"), *headers],
    }
    asyncio.run(app(scope, receive, send))
    assert asked == []
    assert sent[0]["status"] == 401  # not 413: the key comes first
    assert (b"content-type", b"application/problem+json") in sent[0]["headers"]
    assert json.loads(sent[1]["body"])["title"] == "unauthorized"


def test_anonymous_requests_pass_the_key_check_when_allowed() -> None:
    app = create_app(edge_settings(allow_anonymous=True), Stub())  # type: ignore[arg-type]
    with serve(app) as url:
        assert httpx.get(f"{url}/v1/sessions/s1/messages").status_code == 200
        assert_problem(httpx.get(f"{url}/v1/sessions/s1/messages",
                                 headers={"Authorization": "Bearer wrong"}), 401)


class Unreachable:
    """A Memory stand-in over a real `Store` whose Neo4j address answers nothing."""

    def __init__(self, settings: Settings) -> None:
        self.store = Store(settings)

    def ensure_schema(self) -> None:
        self.store.ping()


def test_a_503_does_not_reveal_where_neo4j_is() -> None:
    port = free_port()  # nothing listens there
    settings = edge_settings(neo4j_uri=f"bolt://127.0.0.1:{port}")
    memory = Unreachable(settings)
    try:
        with serve(create_app(settings, memory)) as url:  # type: ignore[arg-type]
            for r in (httpx.get(f"{url}/healthz"),
                      httpx.get(f"{url}/v1/sessions/s1/messages", headers=KEY)):
                body = assert_problem(r, 503)
                assert body["detail"] == "Neo4j is unreachable; retry later"
                assert str(port) not in r.text and "127.0.0.1" not in r.text
                assert r.headers["retry-after"]
    finally:
        memory.store.close()
