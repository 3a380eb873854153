"""Errors as RFC 9457 problem bodies: one place maps library errors, bad requests, unknown routes
and unexpected exceptions to HTTP, so every error the server sends is application/problem+json.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException
from starlette.routing import Match

from graphmem.errors import (
    Conflict,
    Forbidden,
    GraphMemError,
    InvalidInput,
    StoreBusy,
    StoreUnavailable,
)
from graphmem.wire import MAX_ERRORS, field_name, problem_body

log = logging.getLogger("graphmem.api")
PROBLEM = "application/problem+json"
UNREACHABLE = "Neo4j is unreachable; retry later"
BUSY = "Neo4j is busy with conflicting writes; nothing was written, retry later"


def problem(status: int, title: str, detail: str, *, headers: dict[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = problem_body(status, title, detail, **extra)
    out = dict(headers or {})
    if status == 401:
        out["WWW-Authenticate"] = "Bearer"
    if status == 503:
        out["Retry-After"] = "5"
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=out)


def store_unavailable(exc: StoreUnavailable) -> JSONResponse:
    """503 without the store's address: the detail (host, port, driver message) goes to the log."""
    log.warning("%s: %s", exc.title, exc.detail)
    return problem(503, exc.title, BUSY if isinstance(exc, StoreBusy) else UNREACHABLE)


def _field(loc: tuple[Any, ...]) -> str:
    """('body', 'messages', 0, 'timestamp') -> 'messages[0].timestamp'. A body that is a
    union of models (``POST /v1/traces``) has the member's name first ('body', 'TraceBatch',
    'traces'): it names no field, and is skipped."""
    prefixes = ("body", "query", "path", "header", "cookie")
    parts = loc[1:] if loc and loc[0] in prefixes else loc
    if loc[:1] == ("body",) and parts and str(parts[0])[:1].isupper():
        parts = parts[1:]
    return field_name(parts)


def invalid_input(found: Sequence[Any]) -> JSONResponse:
    """A 422 problem for validation errors: the first `MAX_ERRORS` listed, `error_count` says
    how many there were (a list of bad items must not make an answer of its size)."""
    errors = [{"field": _field(tuple(e.get("loc", ()))), "problem": e.get("msg", "invalid")}
              for e in found[:MAX_ERRORS]]
    detail = "; ".join(f"{e['field']}: {e['problem']}" for e in errors[:5])
    if len(found) > len(errors):
        detail += f" (and {len(found) - len(errors)} more errors)"
    return problem(422, "invalid input", detail, field=errors[0]["field"], errors=errors,
                   error_count=len(found))


def _unreadable_body(exc: HTTPException) -> str:
    """Why FastAPI could not parse a body (it raises a bare 400 and keeps the cause)."""
    cause = exc.__cause__
    if isinstance(cause, UnicodeDecodeError):
        return "the body is not valid UTF-8"
    if isinstance(cause, RecursionError):
        return "the body's JSON nests too deeply"
    return f"the body could not be parsed: {exc.detail}"


def allowed_methods(request: Request) -> str:
    """Every method some route answers on the request's path, e.g. ``DELETE, GET`` (routes
    with overlapping paths each add theirs; Starlette names only the first route's)."""
    methods: set[str] = set()
    for route in iter_route_contexts(request.app.routes):
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= route.methods or set()
    return ", ".join(sorted(methods))


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase.lower()
    except ValueError:
        return "error"


def install(app: FastAPI) -> None:
    @app.exception_handler(GraphMemError)
    async def _library(_: Request, exc: GraphMemError) -> JSONResponse:
        if isinstance(exc, InvalidInput):
            errors = [{"field": exc.field, "problem": exc.problem}]
            return problem(exc.status, exc.title, exc.detail, field=exc.field, errors=errors)
        if isinstance(exc, StoreUnavailable):
            return store_unavailable(exc)
        if isinstance(exc, Forbidden | Conflict) and exc.field is not None:
            return problem(exc.status, exc.title, exc.detail, field=exc.field)
        if exc.status == 501:  # a refusal the server means to give (not configured here)
            log.info("%s: %s", exc.title, exc.detail)
        elif exc.status >= 500:
            log.error("%s: %s", exc.title, exc.detail)
        return problem(exc.status, exc.title, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        found = exc.errors()
        if any(e.get("type") == "json_invalid" for e in found):
            where = found[0].get("ctx", {}).get("error", "")
            return problem(400, "malformed JSON", f"the body is not valid JSON: {where}",
                           field="body", errors=[{"field": "body", "problem": "malformed JSON"}])
        return invalid_input(found)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        status = exc.status_code
        if status == 400:
            detail = _unreadable_body(exc)
            return problem(400, "malformed JSON", detail, field="body",
                           errors=[{"field": "body", "problem": detail}])
        headers = dict(exc.headers or {})
        if status == 415:  # api/media.py: a body that is not JSON
            return problem(415, "unsupported media type", str(exc.detail), headers=headers,
                           field="body", errors=[{"field": "body", "problem": str(exc.detail)}])
        if status == 404:
            detail = f"no route {request.url.path}"
        elif status == 405:
            detail = f"{request.method} is not allowed on {request.url.path}"
            headers["Allow"] = allowed_methods(request) or headers.get("Allow", "")
        else:
            detail = str(exc.detail)
        return problem(status, _phrase(status), detail, headers=headers)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # Reached only for errors outside `Unexpected` (it catches everything inside it).
        log.exception("unexpected error", exc_info=exc)
        return problem(500, "internal error", "an unexpected error; see the server log")


class Unexpected:
    """Pure ASGI middleware: an unexpected exception becomes a 500 problem and the connection
    stays usable. (Starlette's outermost error middleware sends its 500 and then re-raises, and
    the server then drops the keep-alive connection without saying ``Connection: close``.)"""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = finished = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"),
                          exc_info=exc)
            if finished:
                return  # the response went out whole (an error after it, e.g. a background task)
            if started:
                raise  # half a response: only closing the connection can end it
            response = problem(500, "internal error", "an unexpected error; see the server log")
            await response(scope, receive, send)
