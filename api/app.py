"""The HTTP API: a thin FastAPI layer over `graphmem.Memory`; build it with `create_app(settings)`.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from graphmem import __version__
from graphmem.config import Settings
from graphmem.service import Memory

from . import (
    browser,
    docs,
    documents,
    facts,
    forget,
    health,
    jobs,
    media,
    messages,
    observability,
    openapi,
    problems,
    procedural,
    usage,
)
from . import context as agent_context
from .auth import KeyGate, KeyRing, resolve_access
from .deps import Parts, Runtime
from .limits import BodyLimit, RateGate


def create_app(settings: Settings | None = None, memory: Memory | None = None) -> FastAPI:
    settings = settings or Settings()
    runtime = Runtime(settings, memory)
    # MCP over streamable HTTP at /mcp: same keys, same Memory, same logs and metrics. Imported
    # here: the SDK takes a second to import, which importers of this module need not pay.
    from graphmem.mcp.http import http_endpoint

    keys = KeyRing(settings)  # a keys file that cannot be read stops the start here
    mcp, mcp_lifespan = http_endpoint(runtime.ready_memory,
                                      lambda header: resolve_access(keys, header), settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        runtime.open()
        async with mcp_lifespan():
            yield
        runtime.close()

    app = FastAPI(title="graphmem", version=__version__, lifespan=lifespan,
                  description="Long-term memory for AI agents on Neo4j.",
                  docs_url=None, redoc_url=None,  # served offline by docs.install
                  dependencies=[Depends(media.json_body)])  # 415 for a body that is not JSON
    problems.install(app)
    openapi.install(app, anonymous=settings.allow_anonymous)
    docs.install(app)
    # Added last is outermost: an unexpected error becomes a 500 problem, then the key is
    # checked (401 before any body is read), then the body is counted (413).
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(RateGate, settings=settings, keys=keys)  # 429 before the body is read
    app.add_middleware(KeyGate, keys=keys)
    app.add_middleware(problems.Unexpected)
    observability.install(app, settings, runtime, keys)  # outermost: request id, metrics, …
    app.state.parts = Parts(runtime, keys)  # what the routes' tenant memory is made from
    for module in (messages, facts, jobs, usage, procedural, forget, agent_context, documents,
                   health):
        app.include_router(module.router)
    app.include_router(browser.router(settings))
    app.add_route("/mcp", mcp, include_in_schema=False)

    return app


def app_from_environment() -> FastAPI:
    """The app with settings from the environment: the factory each API process of
    `graphmem serve --workers N` calls (every process opens its own Memory)."""
    return create_app(Settings())
