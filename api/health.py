"""``GET /healthz``: whether Neo4j answers and the schema is in place (no key needed)."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from graphmem import __version__
from graphmem.errors import GraphMemError, StoreUnavailable

from . import problems
from .deps import Parts

router = APIRouter()


@router.get("/healthz")
def healthz(request: Request) -> JSONResponse:
    """No key needed. 200 when Neo4j answers and the schema is in place, else 503."""
    parts: Parts = request.app.state.parts
    body: dict[str, Any] = {"version": __version__}
    try:
        parts.runtime.ready_memory().ping()
    except StoreUnavailable as exc:
        return problems.store_unavailable(exc)
    except GraphMemError as exc:  # e.g. a database built for another embedding model
        return problems.problem(503, exc.title, exc.detail)
    body["neo4j"] = "ok"
    return JSONResponse(body)
