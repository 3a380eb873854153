"""Errors as RFC 9457 problem bodies: one place maps library errors and bad requests to HTTP."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from graphmem.errors import GraphMemError, InvalidInput, StoreUnavailable

log = logging.getLogger("graphmem.api")
PROBLEM = "application/problem+json"


def problem(status: int, title: str, detail: str, **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    headers = {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if status == 503:
        headers["Retry-After"] = "5"
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def _field(loc: tuple[Any, ...]) -> str:
    """('body', 'messages', 0, 'timestamp') -> 'messages[0].timestamp'."""
    out = ""
    for part in loc[1:] if loc and loc[0] in ("body", "query", "path") else loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def install(app: FastAPI) -> None:
    @app.exception_handler(GraphMemError)
    async def _library(_: Request, exc: GraphMemError) -> JSONResponse:
        if isinstance(exc, InvalidInput):
            errors = [{"field": exc.field, "problem": exc.problem}]
            return problem(exc.status, exc.title, exc.detail, field=exc.field, errors=errors)
        if exc.status >= 500 and not isinstance(exc, StoreUnavailable):
            log.error("%s: %s", exc.title, exc.detail)
        return problem(exc.status, exc.title, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"field": _field(tuple(e.get("loc", ()))), "problem": e.get("msg", "invalid")}
            for e in exc.errors()
        ]
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            first = exc.errors()[0]
            where = first.get("ctx", {}).get("error", "")
            return problem(400, "malformed JSON", f"the body is not valid JSON: {where}",
                           field="body", errors=[{"field": "body", "problem": "malformed JSON"}])
        detail = "; ".join(f"{e['field']}: {e['problem']}" for e in errors[:5])
        return problem(422, "invalid input", detail, field=errors[0]["field"], errors=errors)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return problem(500, "internal error", "an unexpected error; see the server log")
