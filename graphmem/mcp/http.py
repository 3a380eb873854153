"""MCP over streamable HTTP, served by the HTTP API at ``/mcp`` (`http_endpoint`): stateless,
JSON replies. Every request carries ``Authorization: Bearer <key>``; `KeyCheck` refuses a
missing or unknown key with 401 before the MCP layer runs and sends a read-only key to a server
without the write tools, and each tool call acts for the key's tenant, resolved again from that
request's header. The SDK's own HTTP refusals (a Host or Origin it does not answer to) go out as
problem+json (`PlainErrors`)."""


import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)

from graphmem.access import Access
from graphmem.config import Settings, caller_of
from graphmem.errors import (
    GraphMemError,
    InvalidInput,
)
from graphmem.tenant_memory import TenantMemory
from graphmem.wire import problem_body

if TYPE_CHECKING:
    from graphmem.service import Memory

from graphmem.mcp.errors import Ctx
from graphmem.mcp.tools import build_server

Resolve = Callable[[str | None], Access]
"""An ``Authorization`` header value -> what it grants; raises `Unauthorized` (the API's
rule)."""


def _authorization(ctx: Ctx) -> str | None:
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return headers.get("authorization") if headers is not None else None


async def _send_problem(send: Any, status: int, detail: str,
                        headers: list[tuple[bytes, bytes]] | None = None, **extra: Any) -> None:
    """An RFC 9457 problem, as the API sends every error (``graphmem.api.problems``)."""
    body = json.dumps(problem_body(status, HTTPStatus(status).phrase.lower(), detail,
                                   **extra)).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class KeyCheck:
    """Pure ASGI wrapper: a request without a valid key gets 401 problem+json before MCP runs;
    a read-only key's request goes to ``read_only_app`` (a server without the write tools),
    any other to ``app``."""

    def __init__(self, app: Any, read_only_app: Any, resolve: Resolve) -> None:
        self.app = app
        self.read_only_app = read_only_app
        self.resolve = resolve

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        app = self.app
        if scope["type"] == "http":
            values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
            try:
                if len(values) > 1:
                    raise InvalidInput("Authorization", "send one Authorization header")
                access = self.resolve(values[0].decode("latin-1") if values else None)
            except GraphMemError as exc:
                await _send_problem(send, 401, exc.detail, [(b"www-authenticate", b"Bearer")])
                return
            if access.read_only:
                app = self.read_only_app
        await app(scope, receive, send)


REFUSED_HEADER = re.compile(r"Invalid ([A-Za-z-]+) header")
"""The SDK's plain-text refusal of a request header (Host, Origin, Content-Type)."""
WHY_REFUSED = {
    "Host": " (DNS rebinding protection: a server on a loopback address answers to loopback "
            "hosts only)",
    "Origin": " (DNS rebinding protection: a server on a loopback address answers to loopback "
              "origins only)",
    "Content-Type": "; send application/json",
}


class PlainErrors:
    """Pure ASGI wrapper: an error the SDK's HTTP transport sends as plain text (or with no
    body), such as its DNS rebinding protection's 421 for a Host and 403 for an Origin it does
    not answer to, goes out as problem+json naming the header (``field``); its other headers
    (e.g. ``Allow``) are kept. JSON-RPC errors (``application/json``) pass unchanged."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] | None = None
        text = b""

        async def rewrite(message: dict[str, Any]) -> None:
            nonlocal held, text
            if message["type"] == "http.response.start" and message["status"] >= 400:
                headers = dict(message.get("headers", []))
                if not headers.get(b"content-type", b"").startswith(b"application/json"):
                    held = message
                    return
            if held is not None and message["type"] == "http.response.body":
                text += message.get("body", b"")
                if not message.get("more_body"):
                    await self._problem(scope, held, text.decode("utf-8", "replace"), send)
                return
            await send(message)

        await self.app(scope, receive, rewrite)

    @staticmethod
    async def _problem(scope: dict[str, Any], start: dict[str, Any], text: str,
                       send: Any) -> None:
        status: int = start["status"]
        kept = [(k, v) for k, v in start.get("headers", [])
                if k.lower() not in (b"content-type", b"content-length")]
        refused = REFUSED_HEADER.fullmatch(text.strip())
        if refused is None:
            await _send_problem(send, status, text.strip() or HTTPStatus(status).phrase, kept)
            return
        name = refused[1]
        values = [v.decode("latin-1") for k, v in scope.get("headers", [])
                  if k == name.lower().encode()]
        if not values:
            detail = f"no {name} header was sent"
        else:
            detail = f"this server does not accept the {name} header {values[0]!r}"
        detail += WHY_REFUSED.get(name, "")
        await _send_problem(send, status, detail, kept, field=name)


def http_endpoint(
    memory: Callable[[], "Memory"], resolve: Resolve, settings: Settings,
) -> tuple[Any, Callable[[], contextlib.AbstractAsyncContextManager[None]]]:
    """(ASGI app, lifespan) of MCP over streamable HTTP, for the API to route ``/mcp`` to.
    ``memory()`` gives the `Memory` (opened by the API), ``resolve`` what the key grants. The
    lifespan must run while the app serves (it holds the MCP task groups). Two servers, one
    without the write tools for read-only keys: the tools a server lists are its own."""

    def scoped(ctx: Ctx) -> TenantMemory:
        header = _authorization(ctx)
        access = resolve(header)
        return memory().for_tenant(access.tenant, access, caller_of(header))

    def manager(read_only: bool) -> StreamableHTTPSessionManager:
        server = build_server(scoped, read_only=read_only, tools=settings.mcp_tools)
        # On a loopback host the SDK adds DNS rebinding protection (Host and Origin checked).
        app = server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            max_request_body_size=settings.max_request_bytes, host=settings.host)
        del app  # built for its session manager; the API routes /mcp to the handler itself
        return server.session_manager

    writing, reading = manager(read_only=False), manager(read_only=True)

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with writing.run(), reading.run():
            yield

    return KeyCheck(PlainErrors(StreamableHTTPASGIApp(writing)),
                    PlainErrors(StreamableHTTPASGIApp(reading)), resolve), lifespan

