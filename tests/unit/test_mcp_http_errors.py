"""`graphmem.mcp.http.PlainErrors` straight through ASGI: the MCP SDK's plain-text or bodyless
HTTP errors become problem+json (keeping headers such as ``Allow``); JSON-RPC errors and
successful replies pass unchanged."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from graphmem.mcp.http import PlainErrors


def answer(status: int, body: bytes, headers: list[tuple[bytes, bytes]],
           request_headers: list[tuple[bytes, bytes]] | None = None) -> list[dict[str, Any]]:
    async def sdk(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp",
             "headers": request_headers or []}
    asyncio.run(PlainErrors(sdk)(scope, None, send))
    return sent


def test_a_bodyless_405_becomes_a_problem_that_keeps_allow() -> None:
    start, body = answer(405, b"", [(b"allow", b"POST")])
    headers = dict(start["headers"])
    assert start["status"] == 405 and headers[b"allow"] == b"POST"
    assert headers[b"content-type"] == b"application/problem+json"
    assert json.loads(body["body"]) == {"type": "about:blank", "title": "method not allowed",
                                        "status": 405, "detail": "Method Not Allowed"}


def test_a_refused_host_names_the_header() -> None:
    start, body = answer(421, b"Invalid Host header", [(b"content-type", b"text/plain")],
                         [(b"host", b"evil.example")])
    problem = json.loads(body["body"])
    assert start["status"] == 421 and problem["field"] == "Host"
    assert problem["title"] == "misdirected request"
    assert "'evil.example'" in problem["detail"]
    assert int(dict(start["headers"])[b"content-length"]) == len(body["body"])


@pytest.mark.parametrize(("status", "content_type"), [
    (400, b"application/json"), (200, b"application/json"), (202, b""),
])
def test_json_rpc_errors_and_replies_pass_unchanged(status: int, content_type: bytes) -> None:
    headers = [(b"content-type", content_type)] if content_type else []
    body = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}}'
    start, sent = answer(status, body, headers)
    assert start["status"] == status and start["headers"] == headers
    assert sent["body"] == body
