"""API keys: ``Authorization: Bearer <key>``; settings keep only sha256 hashes, each mapped to
what it grants (`graphmem.access.Access`: a tenant, maybe some of its owners only, maybe read
only). `KeyGate` refuses a request to ``/v1`` without a valid key before its body is read;
`access_dependency` gives the routes the caller's access."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Header

from graphmem.access import Access
from graphmem.config import Settings, hash_api_key
from graphmem.errors import Unauthorized

from .problems import problem

PROTECTED_PREFIX = "/v1"


def resolve_access(settings: Settings, authorization: str | None) -> Access:
    """What an ``Authorization`` header value grants; `Unauthorized` when there is no key or an
    unknown one."""
    if authorization is None:
        if settings.allow_anonymous:
            return Access(tenant=settings.anonymous_tenant)
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("malformed Authorization header: expected 'Bearer <key>'")
    found = settings.api_keys.get(hash_api_key(key.strip()))
    if found is None:
        raise Unauthorized("unknown API key")
    return Access.of(found)


def resolve_tenant(settings: Settings, authorization: str | None) -> str:
    """The tenant of an ``Authorization`` header value (`resolve_access`)."""
    return resolve_access(settings, authorization).tenant


def access_dependency(settings: Settings) -> Callable[[str | None], Awaitable[Access]]:
    """The route dependency giving the caller's access. It is a coroutine function (nothing in
    it blocks), so FastAPI calls it on the event loop instead of handing it to a thread."""
    async def access(authorization: str | None = Header(default=None)) -> Access:
        return resolve_access(settings, authorization)

    return access


class KeyGate:
    """Pure ASGI middleware: a request under ``/v1`` without a valid key gets its 401 here,
    before any of its body is read or parsed."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (
            path == PROTECTED_PREFIX or path.startswith(PROTECTED_PREFIX + "/")
        ):
            values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
            header = values[0].decode("latin-1") if values else None
            try:
                if len(values) > 1:
                    raise Unauthorized("send one Authorization header, not several")
                resolve_access(self.settings, header)
            except Unauthorized as exc:
                await problem(401, exc.title, exc.detail)(scope, receive, send)
                return
        await self.app(scope, receive, send)
