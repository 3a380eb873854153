"""Limits of the HTTP edge: a request body larger than the limit is refused with 413 before it
is read into memory (`BodyLimit`); a key past its rate is refused with 429 before its body is
read (`RateGate`)."""

from __future__ import annotations

import math
import time
from typing import Any

from graphmem.config import Settings
from graphmem.ratelimit import TokenBuckets

from .auth import Caller, KeyRing, caller
from .problems import problem

Scope = dict[str, Any]
LIMITED = ("/v1", "/mcp")
"""The paths whose requests count against their key's rate."""


class RateGate:
    """Pure ASGI middleware: each key's requests to ``/v1`` and ``/mcp`` are paced by a token
    bucket (`graphmem.ratelimit`): ``rate_limit`` per second (the key's own, else the
    server's), bursts of ``rate_limit_burst``; past it a 429 problem with ``Retry-After``
    (whole seconds) goes out before the body is read, and nothing is done. Requests without a
    valid key pass on to their 401. Anonymous requests share one bucket."""

    def __init__(self, app: Any, settings: Settings, keys: KeyRing) -> None:
        self.app = app
        self.rate = settings.rate_limit
        self.keys = keys
        self.buckets = TokenBuckets(settings.rate_limit_burst, time.monotonic)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and any(path == p or path.startswith(p + "/")
                                           for p in LIMITED):
            wait, detail = self._wait(caller(self.keys, scope))
            if wait > 0:
                after = max(1, math.ceil(wait))
                await problem(429, "too many requests", f"{detail}; retry after {after} s",
                              headers={"Retry-After": str(after)})(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _wait(self, who: Caller) -> tuple[float, str]:
        """(seconds until the key's next request may go, 0 now; what its rate is). A request
        without a valid key is the key check's to refuse, not counted here."""
        if who.access is None:
            return 0.0, ""
        rate = self.rate if who.access.rate_limit is None else who.access.rate_limit
        return self.buckets.take(who.hashed or "anonymous", rate), (
            f"this key may send {rate:g} requests per second (bursts of {self.buckets.burst})")


class BodyLimit:
    """Pure ASGI middleware: counts body bytes as they arrive (chunked bodies included).

    Past the limit, reading the body raises; whatever the app makes of that (FastAPI turns any
    error while reading a body into a 400) is dropped, and the 413 goes out instead."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        seen = 0
        exceeded = started = False

        async def counted() -> Any:
            nonlocal seen, exceeded
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                exceeded = True
                raise _TooLarge
            return message

        async def guarded(message: dict[str, Any]) -> None:
            nonlocal started
            if exceeded and not started:
                return  # the app's answer to the refused read: the 413 replaces it
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not exceeded or started:
                raise
        if exceeded and not started:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Any, send: Any) -> None:
        response = problem(413, "request too large",
                           f"the request body exceeds {self.max_bytes} bytes", field="body")
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass
