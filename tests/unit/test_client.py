"""The Python client without a server: httpx.MockTransport plays the API. Error answers become
typed exceptions, retries follow the policy (what, how often, how long), timeouts raise
`TransportTimeout`, bad input is refused before sending, and the sync and async clients match."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from graphmem.client import (
    APIError,
    AsyncGraphMem,
    AuthenticationError,
    ConflictError,
    GraphMem,
    InvalidInputError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TooLargeError,
    TransportError,
    TransportTimeout,
    UnavailableError,
    calls,
)
from graphmem.client.base import Retry
from graphmem.wire import AnswerRequest, ContextRequest, SearchRequest, SkillSearch

URL = "http://graphmem.test"
REPORT = {"ids": ["m1"], "created": 1, "duplicates": 0}
MESSAGE = {"owner": "alice", "session_id": "s1", "speaker": "alice", "text": "hi",
           "timestamp": "2026-03-12T14:05:00+01:00"}


def problem(status: int, detail: str = "it went wrong", **extra: Any) -> httpx.Response:
    body = {"type": "about:blank", "title": "t", "status": status, "detail": detail, **extra}
    headers = {"Retry-After": "5"} if status == 503 else {"Retry-After": "2"} if status == 429 \
        else {}
    return httpx.Response(status, json=body, headers=headers,
                          extensions={"reason_phrase": b"x"})


def client(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> GraphMem:
    kw.setdefault("backoff", 0.0)
    kw.setdefault("max_backoff", 0.0)  # no waiting, not even the server's Retry-After
    return GraphMem(URL, api_key="k", transport=httpx.MockTransport(handler), **kw)


class Script:
    """Answers in turn (a Response, or an exception to raise); records every request."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.mark.parametrize(("status", "cls"), [
    (400, InvalidInputError), (401, AuthenticationError), (404, NotFoundError),
    (409, ConflictError), (413, TooLargeError), (422, InvalidInputError),
    (429, RateLimitError), (500, ServerError), (503, UnavailableError), (405, APIError),
])
def test_error_answers_become_typed_exceptions(status: int, cls: type[APIError]) -> None:
    with client(Script(problem(status)), retries=0) as gm, pytest.raises(cls) as info:
        gm.get_message("m1")
    assert type(info.value) is cls
    assert (info.value.status, info.value.detail) == (status, "it went wrong")
    assert info.value.body is not None and info.value.body.status == status


def test_invalid_input_names_the_field() -> None:
    errors = [{"field": "messages[0].timestamp", "problem": "needs a timezone offset"}]
    answer = problem(422, "messages[0].timestamp: needs...", field=errors[0]["field"],
                     errors=errors)
    with client(Script(answer)) as gm, pytest.raises(InvalidInputError) as info:
        gm.add_messages([MESSAGE])
    assert info.value.field == "messages[0].timestamp"
    assert info.value.errors[0].problem == "needs a timezone offset"
    too_large = problem(413, "too much", field="messages")
    with client(Script(too_large)) as gm, pytest.raises(InvalidInputError) as big:
        gm.add_messages([MESSAGE])
    assert isinstance(big.value, TooLargeError) and big.value.field == "messages"


def test_an_error_without_a_problem_body_keeps_its_text() -> None:
    answer = httpx.Response(502, text="<html>bad gateway</html>")
    with client(Script(answer)) as gm, pytest.raises(ServerError) as info:
        gm.health()
    assert info.value.status == 502 and "bad gateway" in info.value.detail
    assert info.value.body is None


def test_bad_input_is_refused_before_sending() -> None:
    script = Script(httpx.Response(201, json=REPORT))
    naive = {**MESSAGE, "timestamp": "2026-03-12T14:05:00"}
    with client(script) as gm, pytest.raises(InvalidInputError) as info:
        gm.add_messages([MESSAGE, naive])
    assert info.value.field == "messages[1].timestamp" and "offset" in info.value.detail
    assert info.value.status == 422 and script.requests == []
    with client(script) as gm, pytest.raises(InvalidInputError) as info:
        gm.search("q", owner="alice", k=0)
    assert info.value.field == "k"


def test_requests_carry_the_key_the_models_and_encoded_ids() -> None:
    script = Script(httpx.Response(201, json=REPORT))
    with client(script) as gm:
        report = gm.add_messages([MESSAGE])
        assert report.created == 1
    sent = script.requests[0]
    assert sent.headers["Authorization"] == "Bearer k"
    assert sent.headers["User-Agent"].startswith("graphmem-python/")
    body = httpx.Response(200, content=sent.content).json()
    assert body == {"messages": [{**MESSAGE, "timestamp": "2026-03-12T13:05:00Z"}]}

    message = {**MESSAGE, "id": "conv-26/D1:3", "recorded_at": "2026-03-12T13:05:01Z",
               "timestamp": "2026-03-12T13:05:00Z"}
    script = Script(httpx.Response(200, json=message))
    with client(script) as gm:
        got = gm.get_message("conv-26/D1:3")
    assert got.id == "conv-26/D1:3" and got.timestamp.tzinfo is not None
    assert script.requests[0].url.raw_path == b"/v1/messages/conv-26%2FD1%3A3"

    script = Script(httpx.Response(200, json=[]))
    with client(script) as gm:
        gm.observations("alice", include_history=True)
        gm.session_messages("s/1", owner="alice", limit=5)
    first, second = script.requests
    assert first.url.params == httpx.QueryParams({"owner": "alice", "include_history": "true"})
    assert second.url.raw_path.startswith(b"/v1/sessions/s%2F1/messages?")
    assert second.url.params["limit"] == "5" and second.url.params["skip"] == "0"

    report = {"kind": "session", "id": "s/1", "owner": "alice",
              "forgotten_at": "2026-03-12T13:05:00Z", "removed": {"messages": 2}}
    script = Script(httpx.Response(200, json=report))
    with client(script) as gm:
        got_report = gm.forget_session("s/1", owner="alice")
    assert (got_report.kind, got_report.owner, got_report.removed) == (
        "session", "alice", {"messages": 2})
    sent = script.requests[0]
    assert sent.method == "DELETE" and sent.url.raw_path == b"/v1/sessions/s%2F1?owner=alice"

    script = Script(httpx.Response(200, json={**report, "kind": "messages", "id": "{}"}))
    with client(script) as gm:
        assert gm.forget_messages("alice", metadata={"source": "gmail"}).kind == "messages"
    sent = script.requests[0]
    assert sent.method == "POST" and sent.url.raw_path == b"/v1/messages/forget"
    assert json.loads(sent.content) == {"owner": "alice", "metadata": {"source": "gmail"}}
    with pytest.raises(ValidationError):  # at least one filter, checked before sending
        gm.forget_messages("alice")

    pages = [{"owner": "a/b", "exported_at": "2026-12-05T10:00:00Z", "next": "message:m1",
              "records": [{"kind": "message", "id": "m1", "properties": {"text": "hi"}}]},
             {"owner": "a/b", "exported_at": "2026-12-05T10:00:01Z", "next": None,
              "records": [{"kind": "fact", "id": "f1", "properties": {}, "links": [
                  {"type": "SUPPORTED_BY", "direction": "out", "kind": "message", "id": "m1"}]}]}]
    script = Script(*(httpx.Response(200, json=p) for p in pages))
    with client(script) as gm:
        got = list(gm.export_all("a/b", limit=1))
    assert [(r.kind, r.id) for r in got] == [("message", "m1"), ("fact", "f1")]
    assert got[1].links[0].properties == {}
    first, second = script.requests
    assert first.url.raw_path.startswith(b"/v1/owners/a%2Fb/export?")
    assert first.url.params["after"] == "" and first.url.params["limit"] == "1"
    assert second.url.params["after"] == "message:m1"


def test_the_url_and_key_default_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_URL", "http://from-env:9000")
    monkeypatch.setenv("GRAPHMEM_API_KEY", "env-key")
    script = Script(httpx.Response(200, json={"version": "x"}))
    with GraphMem(transport=httpx.MockTransport(script)) as gm:
        gm.health()
    assert str(script.requests[0].url) == "http://from-env:9000/healthz"
    assert script.requests[0].headers["Authorization"] == "Bearer env-key"


def test_a_503_is_retried_for_safe_requests_then_raised() -> None:
    script = Script(problem(503), problem(503), httpx.Response(201, json=REPORT))
    with client(script, retries=2) as gm:
        assert gm.add_messages([MESSAGE]).ids == ["m1"]  # idempotent by message id
    assert len(script.requests) == 3

    script = Script(problem(503))
    with client(script, retries=2) as gm, pytest.raises(UnavailableError):
        gm.search("q", owner="alice")
    assert len(script.requests) == 3

    script = Script(problem(503))
    with client(script, retries=2) as gm, pytest.raises(UnavailableError):
        gm.add_observations([{"owner": "o", "subject": "s", "type": "t", "content": "c"}])
    assert len(script.requests) == 1  # not idempotent: sent once


def test_a_429_is_retried_for_any_request_after_retry_after() -> None:
    script = Script(problem(429), httpx.Response(201, json=[]))
    with client(script, retries=2) as gm:  # not idempotent, but the server did nothing
        gm.add_observations([{"owner": "o", "subject": "s", "type": "t", "content": "c"}])
    assert len(script.requests) == 2
    with client(Script(problem(429)), retries=1) as gm, pytest.raises(RateLimitError) as info:
        gm.search("q", owner="alice")
    assert info.value.retry_after == 2.0


def test_connection_errors_are_retried_lost_answers_only_when_safe() -> None:
    refused = httpx.ConnectError("refused")
    script = Script(refused, httpx.Response(201, json=[]))
    with client(script) as gm:  # never sent: safe for any request
        gm.profile_ops([{"op": "NOOP", "owner": "o", "key": "k"}])
    assert len(script.requests) == 2

    lost = httpx.ReadTimeout("slow")
    script = Script(lost, httpx.Response(201, json=[]))
    with client(script) as gm, pytest.raises(TransportTimeout):
        gm.profile_ops([{"op": "NOOP", "owner": "o", "key": "k"}])
    assert len(script.requests) == 1  # it may have been applied: not sent again

    script = Script(httpx.RemoteProtocolError("reset"), httpx.Response(200, json=[]))
    with client(script) as gm:
        assert gm.audits() == []
    assert len(script.requests) == 2

    script = Script(refused)
    with client(script, retries=3) as gm, pytest.raises(TransportError) as info:
        gm.health()
    assert len(script.requests) == 4 and not isinstance(info.value, TransportTimeout)
    assert info.value.status is None and isinstance(info.value.__cause__, httpx.ConnectError)


def test_backoff_doubles_honours_retry_after_and_is_capped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    script = Script(httpx.ConnectError("refused"))
    with client(script, retries=3, backoff=1.0, max_backoff=3.0) as gm, \
            pytest.raises(TransportError):
        gm.health()
    assert len(waits) == 3
    assert 0.8 <= waits[0] <= 1.2 and 1.6 <= waits[1] <= 2.4 and waits[2] == 3.0
    waits.clear()
    with client(Script(problem(503)), retries=1, backoff=0.1, max_backoff=30) as gm, \
            pytest.raises(UnavailableError) as info:
        gm.health()
    assert waits == [5.0] and info.value.retry_after == 5.0  # the server's Retry-After


def test_retry_policy_table() -> None:
    policy = Retry(retries=1, backoff=0.0)
    safe, unsafe = calls.get_message("m"), calls.rerun_job("j")
    assert policy.delay(safe, 0, problem(503)) == 5.0  # Retry-After, under max_backoff
    assert policy.delay(safe, 1, problem(503)) is None  # retries spent
    assert policy.delay(unsafe, 0, problem(503)) is None
    assert policy.delay(unsafe, 0, problem(429)) == 2.0  # nothing was read: any request
    assert policy.delay(unsafe, 1, problem(429)) is None
    assert policy.delay(safe, 0, problem(500)) is None
    assert policy.delay(unsafe, 0, httpx.ConnectError("x")) == 0.0
    assert policy.delay(unsafe, 0, httpx.ReadError("x")) is None


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as listener:  # accepts connections (backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        started = time.monotonic()
        with GraphMem(f"http://127.0.0.1:{port}", timeout=0.3, retries=1, backoff=0.0) as gm, \
                pytest.raises(TransportTimeout):
            gm.get_message("m1")  # safe: tried twice
        assert 0.5 <= time.monotonic() - started < 5


def test_async_client_retries_and_maps_errors() -> None:
    script = Script(problem(503), httpx.Response(201, json=REPORT))

    async def main() -> None:
        transport = httpx.MockTransport(script)
        async with AsyncGraphMem(URL, api_key="k", transport=transport, backoff=0.0,
                                 max_backoff=0.0) as gm:
            assert (await gm.add_messages([MESSAGE])).created == 1
            script.answers = [problem(404)]
            with pytest.raises(NotFoundError):
                await gm.get_message("nope")

    asyncio.run(main())
    assert len(script.requests) == 3


def test_sync_and_async_clients_have_the_same_methods() -> None:
    def public(cls: type) -> dict[str, inspect.Signature]:
        return {n: inspect.signature(f) for n, f in inspect.getmembers(cls, inspect.isfunction)
                if not n.startswith("_")}

    sync, aio = public(GraphMem), public(AsyncGraphMem)
    assert sync.pop("close") and aio.pop("aclose")
    iterate, aiterate = sync.pop("export_all"), aio.pop("export_all")  # Iterator / AsyncIterator
    assert iterate.parameters == aiterate.parameters
    assert inspect.isasyncgenfunction(AsyncGraphMem.export_all)
    assert sync == aio
    assert set(calls.ENDPOINTS) <= set(sync)
    for name in calls.ENDPOINTS:
        assert inspect.iscoroutinefunction(getattr(AsyncGraphMem, name)), name


def test_every_api_operation_has_a_client_method() -> None:
    from graphmem.api.app import create_app
    from graphmem.config import Settings

    paths = create_app(Settings()).openapi()["paths"]
    operations = {(m.upper(), p) for p, item in paths.items() for m in item}
    known = {(e.method, e.path) for e in calls.ENDPOINTS.values()}
    assert operations - calls.NOT_COVERED == known


def test_without_a_url_the_clients_say_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_URL", raising=False)
    monkeypatch.setenv("GRAPHMEM_API_KEY", "env-key")
    for make in (GraphMem, AsyncGraphMem):
        with pytest.raises(ValueError, match="GRAPHMEM_URL") as info:
            make()
        assert "GRAPHMEM_API_KEY" in str(info.value) and "base_url" in str(info.value)
    monkeypatch.setenv("GRAPHMEM_URL", "")  # set but empty: the same
    with pytest.raises(ValueError, match="GRAPHMEM_URL"):
        GraphMem(api_key="k")
    with GraphMem("http://given:1") as gm:  # a URL given needs no environment
        assert gm.base_url == "http://given:1"


QUERY_METHODS: dict[str, type[BaseModel]] = {
    "search": SearchRequest, "context": ContextRequest, "answer": AnswerRequest,
    "search_skills": SkillSearch}


@pytest.mark.parametrize("cls", [GraphMem, AsyncGraphMem])
@pytest.mark.parametrize("name", sorted(QUERY_METHODS))
def test_query_keywords_are_the_request_models_fields(cls: type, name: str) -> None:
    params = inspect.signature(getattr(cls, name)).parameters
    assert list(params)[:3] == ["self", "query", "owner"]
    keywords = {n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert not [p for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert keywords == set(QUERY_METHODS[name].model_fields) - {"query", "owner"}
    assert all(params[n].default is None for n in keywords)  # unset: the server's default


@pytest.mark.parametrize("cls", [GraphMem, AsyncGraphMem])
def test_every_public_method_has_a_docstring(cls: type) -> None:
    members = [n for n, _ in inspect.getmembers(cls) if not n.startswith("_")]
    assert len(members) > 30
    assert [n for n in members if not (inspect.getdoc(getattr(cls, n)) or "").strip()] == []


def test_query_keywords_send_what_is_given_and_only_that() -> None:
    script = Script(problem(404))  # only what is sent matters here
    with client(script) as gm:
        with pytest.raises(NotFoundError):
            gm.search("q", "alice", k=3, method="rrf", expand={"before": 0, "after": 1},
                      time_from=datetime(2026, 1, 1, tzinfo=UTC),
                      time_to="2026-02-01T00:00:00Z")
        with pytest.raises(NotFoundError):
            gm.search(SearchRequest(query="q", owner="alice", trace=True))
        with pytest.raises(TypeError, match="either"):
            gm.search(SearchRequest(query="q", owner="alice"), k=3)
        with pytest.raises(InvalidInputError) as info:
            gm.context("q", "alice", units=["message", "nope"])  # type: ignore[list-item]
        assert info.value.field == "units[1]"
    first, second = (json.loads(r.content) for r in script.requests)
    assert first == {"query": "q", "owner": "alice", "k": 3, "method": "rrf",
                     "expand": {"before": 0, "after": 1}, "time_from": "2026-01-01T00:00:00Z",
                     "time_to": "2026-02-01T00:00:00Z"}
    assert second == {"query": "q", "owner": "alice", "trace": True}
    script = Script(problem(404))
    with client(script) as gm, pytest.raises(NotFoundError):
        gm.search_skills("q", "alice", units="cases", cases_per_skill=0)
    assert json.loads(script.requests[0].content) == {"query": "q", "owner": "alice",
                                                      "units": "cases", "cases_per_skill": 0}
