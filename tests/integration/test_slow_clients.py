"""Slow and greedy clients against the real server (`graphmem.ops.http_server` under uvicorn, on a
loopback port), with limits small enough to watch them act within seconds: a header block that
never ends, headers a line at a time, a body that stalls or trickles, a header block too large,
and more connections than the cap. Each is cut off in time (408, 431, 503 or a plain close) and
a normal request still works afterwards.

The API runs over a stand-in for `graphmem.Memory` (`Healthy`, after
`tests.integration.test_http_edges.Stub`): none of this reaches the store. Two tests use a small
ASGI app instead of the API: one answers before it reads the body, one echoes a body.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from tests.integration.test_http_edges import Stub
from tests.support.live_server import serve

KEY = "slow-key"
LIMITS: dict[str, Any] = {"header_timeout_s": 1.0, "body_idle_timeout_s": 1.0,
                          "body_timeout_s": 2.5, "max_connections": 4, "max_header_bytes": 4096,
                          "keep_alive_timeout_s": 30}
SLACK_S = 2.0  # the most a cut may come late on a busy machine
POST_HEAD = (b"POST /v1/messages HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer " + KEY.encode()
             + b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")


class Healthy(Stub):
    """The stand-in, healthy: ``/healthz`` answers 200."""

    def ping(self) -> None:
        pass


def limited(**update: Any) -> Settings:
    return Settings(api_keys={hash_api_key(KEY): "slow"}, **{**LIMITS, **update})


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[str, int]]:
    settings = limited()
    with serve(create_app(settings, Healthy()), settings=settings) as url:  # type: ignore[arg-type]
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def connect(address: tuple[str, int]) -> socket.socket:
    return socket.create_connection(address, timeout=5)


def until_closed(sock: socket.socket, since: float, within_s: float) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and when it closed (seconds after
    ``since``); fails if it is still open ``within_s`` after ``since``."""
    sock.settimeout(0.05)
    data = b""
    while time.monotonic() - since < within_s:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return data, time.monotonic() - since
        data += chunk
    raise AssertionError(f"still open {within_s} s later; received {data!r}")


def closed_now(sock: socket.socket, wait_s: float) -> bool:
    """Whether the server has closed the connection (it sends nothing before closing here)."""
    sock.settimeout(wait_s)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def problem_of(raw: bytes, status: int) -> dict[str, Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith(f"HTTP/1.1 {status} "), raw
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/problem+json", headers
    assert headers["connection"] == "close", headers
    problem: dict[str, Any] = json.loads(body)
    assert problem["status"] == status and problem["title"] and problem["detail"], problem
    return problem


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(
    api: tuple[str, int],
) -> None:
    with connect(api) as sock:
        start = time.monotonic()
        data, after = until_closed(sock, start, 1.0 + SLACK_S)
    assert data == b""  # no request begun: no answer owed
    assert after >= 0.9


def test_a_header_block_that_never_ends_gets_408_and_is_closed(api: tuple[str, int]) -> None:
    with connect(api) as sock:
        start = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n")  # no blank line: never ends
        data, after = until_closed(sock, start, 1.0 + SLACK_S)
    assert after >= 0.9
    assert "headers" in problem_of(data, 408)["detail"]


def test_a_header_line_every_few_tenths_of_a_second_does_not_keep_the_connection(
    api: tuple[str, int],
) -> None:
    with connect(api) as sock:
        start = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n")
        sent = 0
        for i in range(40):  # 12 s at most, if nothing cut it off
            if closed_now(sock, 0.3):
                break
            try:
                sock.sendall(f"X-Slow-{i}: still here\r\n".encode())
            except OSError:
                break
            sent += 1
        after = time.monotonic() - start
    assert sent >= 2  # the lines came in time; the block as a whole did not
    assert 0.9 <= after < 1.0 + SLACK_S


def test_a_next_request_on_a_kept_alive_connection_has_the_same_header_timeout(
    api: tuple[str, int],
) -> None:
    with connect(api) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        sock.settimeout(5)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first
        time.sleep(1.5)  # idle longer than the header timeout: the keep-alive timeout applies
        start = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        data, after = until_closed(sock, start, 1.0 + SLACK_S)
    assert after >= 0.9
    problem_of(data, 408)


def test_a_header_block_over_the_limit_gets_431_at_once(api: tuple[str, int]) -> None:
    with connect(api) as sock:
        start = time.monotonic()
        lines = "".join(f"X-Big-{i}: {'a' * 1000}\r\n" for i in range(5))  # 5 KB, 4 KB allowed
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n" + lines.encode())
        data, after = until_closed(sock, start, 1.0 + SLACK_S)
    assert after < 0.9  # not the header timeout
    assert "4096 bytes" in problem_of(data, 431)["detail"]


def test_a_request_that_is_not_http_gets_a_400_problem(api: tuple[str, int]) -> None:
    """What httptools cannot parse (a space inside the request target, as a fuzzer sends):
    400 problem+json, as every other refusal, not the server's plain text."""
    with connect(api) as sock:
        start = time.monotonic()
        sock.sendall(b"GET /v1/audit/x?t=a b HTTP/1.1\r\nHost: test\r\n\r\n")
        data, _ = until_closed(sock, start, 1.0 + SLACK_S)
    assert "not valid HTTP/1.1" in problem_of(data, 400)["detail"]


def test_a_stalled_body_gets_408_and_the_app_sees_a_disconnect(
    api: tuple[str, int], caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO), connect(api) as sock:
        sock.sendall(POST_HEAD + b'{"messages": [')  # 14 of 1000 bytes, then nothing
        start = time.monotonic()
        data, after = until_closed(sock, start, 1.0 + SLACK_S)
        time.sleep(0.2)  # the app's task ends after the connection
    assert after >= 0.9
    assert "did not arrive in time" in problem_of(data, 408)["detail"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    assert any("request body stalled" in r.getMessage() for r in caplog.records)


def test_a_trickled_body_is_cut_at_the_total_body_timeout(api: tuple[str, int]) -> None:
    with connect(api) as sock:
        sock.sendall(POST_HEAD)
        start = time.monotonic()
        for _ in range(40):  # a byte every 0.4 s: never idle for the idle timeout
            if closed_now(sock, 0.4):
                break
            try:
                sock.sendall(b" ")
            except OSError:
                break
        after = time.monotonic() - start
    assert 2.4 <= after < 2.5 + SLACK_S


def test_connections_over_the_cap_are_refused_and_service_resumes(api: tuple[str, int]) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(LIMITS["max_connections"]):  # kept alive after a whole request: idle
            sock = connect(api)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
            held.append(sock)
        with connect(api) as over:
            data, after = until_closed(over, time.monotonic(), 1.0)
        assert after < 0.5  # refused at once, not after a timeout
        problem = problem_of(data, 503)
        assert "connections" in problem["detail"]
        try:
            r = httpx.get(f"http://{api[0]}:{api[1]}/healthz", timeout=5)
            assert r.status_code == 503
        except httpx.TransportError:
            pass  # the 503 lost to the reset of the unread request: refused all the same
    finally:
        for sock in held:
            sock.close()
    for _ in range(50):  # the server notices the closed connections at once; allow a moment
        r = httpx.get(f"http://{api[0]}:{api[1]}/healthz", timeout=5)
        if r.status_code == 200:
            break
        time.sleep(0.1)
    assert r.status_code == 200, r.text


# --- a bare ASGI app: the answer begun before the body, and a slow but steady body -------------
async def early_then_echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/early``: starts its answer, then reads the body; anything else: echoes the body."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": message["type"] + ".complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    early = scope["path"] == "/early"
    if early:
        await send({"type": "http.response.start", "status": 200, "headers": []})
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body, more = body + message.get("body", b""), message.get("more_body", False)
    if not early:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def bare() -> Iterator[tuple[str, int]]:
    with serve(early_then_echo, settings=limited()) as url:
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def test_a_body_stalled_after_the_answer_began_is_closed_without_a_second_answer(
    bare: tuple[str, int],
) -> None:
    with connect(bare) as sock:
        sock.sendall(b"POST /early HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\nabc")
        start = time.monotonic()
        data, after = until_closed(sock, start, 1.0 + SLACK_S)
    assert after >= 0.9
    assert data.startswith(b"HTTP/1.1 200 ") and b" 408 " not in data, data


def test_a_slow_but_steady_body_within_the_limits_is_served(bare: tuple[str, int]) -> None:
    with connect(bare) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 6\r\n\r\n")
        for part in (b"ab", b"cd", b"ef"):  # 1.8 s in all: under 2.5; pauses under 1
            time.sleep(0.6)
            sock.sendall(part)
        sock.settimeout(5)
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\nabcdef"), answer
