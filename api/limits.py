"""A request body larger than the limit is refused with 413 before it is read into memory."""

from __future__ import annotations

from typing import Any

from .problems import problem

Scope = dict[str, Any]


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
