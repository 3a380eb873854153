"""The HTTP API: a thin FastAPI layer over `graphmem.Memory`; build it with `create_app(settings)`.
"""

import contextlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Path, Query, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from graphmem import __version__, export
from graphmem.config import Settings
from graphmem.errors import GraphMemError, StoreUnavailable
from graphmem.export import OwnerExport
from graphmem.models import (
    MAX_SKIP,
    NAME,
    DeleteReport,
    IngestReport,
    Message,
    MessageBatch,
    OwnerInfo,
    SearchRequest,
    SearchResult,
    SessionInfo,
)
from graphmem.service import Memory
from graphmem.tenant_memory import TenantMemory

from . import (
    browser,
    docs,
    documents,
    facts,
    forget,
    jobs,
    media,
    observability,
    openapi,
    problems,
    procedural,
    usage,
)
from . import context as agent_context
from .auth import Caller, KeyGate, KeyRing, caller_dependency, resolve_access
from .limits import BodyLimit, RateGate
from .replies import model_reply


class _Runtime:
    """The app's one Memory; the schema is applied on first use, so the service starts (and
    answers 503) while Neo4j is down and recovers by itself once it is back."""

    def __init__(self, settings: Settings, memory: Memory | None) -> None:
        self.settings = settings
        self.memory = memory
        self.owned = memory is None
        self.ready = False
        self._lock = threading.Lock()

    def open(self) -> None:
        if self.memory is None:
            self.memory = Memory.open(self.settings, apply_schema=False)
        with contextlib.suppress(GraphMemError):  # reported per request until Neo4j answers
            self.ready_memory()

    def ready_memory(self) -> Memory:
        assert self.memory is not None, "app not started"
        if not self.ready:
            with self._lock:
                if not self.ready:
                    self.memory.ensure_schema()
                    self.ready = True
        return self.memory

    def close(self) -> None:
        if self.memory is not None and self.owned:
            self.memory.close()


def create_app(settings: Settings | None = None, memory: Memory | None = None) -> FastAPI:
    settings = settings or Settings()
    runtime = _Runtime(settings, memory)
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
    Who = Annotated[Caller, Depends(caller_dependency(keys))]

    # The dependencies are coroutine functions: FastAPI calls them on the event loop, where a
    # plain function would cost a hand-off to a worker thread each (three per request).
    async def ready_memory() -> Memory:
        """The Memory once its schema is in place; until then the schema step (which talks to
        Neo4j) runs in a worker thread."""
        if runtime.ready and runtime.memory is not None:
            return runtime.memory
        return await run_in_threadpool(runtime.ready_memory)

    Mem = Annotated[Memory, Depends(ready_memory)]

    async def tenant_memory(who: Who, mem: Mem) -> TenantMemory:
        access = who.granted()
        return mem.for_tenant(access.tenant, access, who.name)

    TenantMem = Annotated[TenantMemory, Depends(tenant_memory)]  # the caller's memory
    v1 = APIRouter(prefix="/v1")
    Name = Annotated[str, Path(min_length=1)]  # `{x:path}`: ids may hold "/" (sent as %2F)

    @v1.post("/messages", status_code=201, response_model=IngestReport)
    def post_messages(batch: MessageBatch, mem: TenantMem) -> IngestReport:
        """Store a batch of messages. 201 means committed in Neo4j; a message id sent twice is
        stored once; a failed batch leaves nothing written."""
        return mem.messages.ingest(batch.messages)

    @v1.get("/messages/{message_id:path}", response_model=Message)
    def get_message(message_id: Name, mem: TenantMem) -> Message:
        """One stored message by id (ids may hold `/`, best sent as `%2F`)."""
        return mem.messages.get(message_id)

    @v1.get("/owners", response_model=list[OwnerInfo])
    def owners(
        mem: TenantMem,
        after: Annotated[str, Query(max_length=200, description="The last owner of the "
                                    "previous page (keyset paging); empty for the first")] = "",
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
    ) -> list[OwnerInfo]:
        """This tenant's owners (anyone with a conversation, a fact or an agent run) by name,
        each with its sessions, messages, latest message time, facts and runs. Page with
        `after` = the last owner of the previous page."""
        return mem.messages.owners(after, limit)

    @v1.get("/sessions", response_model=list[SessionInfo])
    def sessions(
        mem: TenantMem,
        owner: Annotated[str, Query(min_length=1, max_length=200, pattern=NAME)],
        skip: Annotated[int, Query(ge=0, le=MAX_SKIP)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[SessionInfo]:
        """An owner's sessions (conversations), the one with the latest message first: message
        count and the event times of the first and last message, paged."""
        return mem.messages.sessions(owner, skip, limit)

    @v1.get("/sessions/{session_id:path}/messages", response_model=list[Message])
    def session_messages(
        session_id: Name, mem: TenantMem,
        owner: Annotated[str | None, Query(min_length=1)] = None,
        skip: Annotated[int, Query(ge=0, le=MAX_SKIP)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[Message]:
        """A session's messages in event-time order (of one owner if given), paged."""
        return mem.messages.session(session_id, owner, skip, limit)

    @v1.delete("/owners/{owner:path}", response_model=DeleteReport)
    def delete_owner(owner: Name, mem: TenantMem) -> DeleteReport:
        """Forget everything of an owner (this tenant's only); reports what was removed."""
        return mem.messages.forget_owner(owner)

    @v1.get("/owners/{owner:path}/export", response_model=OwnerExport)
    def export_owner(
        owner: Name, mem: TenantMem,
        after: Annotated[str, Query(max_length=2000, description="The `next` of the previous "
                                    "page (a cursor); empty for the first")] = "",
        limit: Annotated[int, Query(ge=1, le=export.MAX_LIMIT)] = export.DEFAULT_LIMIT,
    ) -> Response:
        """Everything stored about an owner, a page at a time: messages, entities, episodes,
        facts (every version), agent runs with their steps, cases, clusters and skills (every
        version), each with its stored properties and its links to the others. Page with
        `after` = the previous page's `next` until `next` is null. 404 when nothing is stored
        for the owner."""
        return model_reply(mem.export(owner, after, limit))

    @v1.post("/search", response_model=SearchResult)
    def search(req: SearchRequest, mem: TenantMem) -> Response:
        """Hybrid recall over an owner's memory: vector and fulltext lists fused by reciprocal
        rank, expanded along the conversation; hits in chronological order with a rendered
        context."""
        return model_reply(mem.search(req))

    app.include_router(v1)
    app.include_router(facts.router(TenantMem))
    app.include_router(jobs.router(TenantMem))
    app.include_router(usage.router(TenantMem))
    app.include_router(procedural.router(TenantMem))
    app.include_router(forget.router(TenantMem))  # one message, trace or fact
    app.include_router(agent_context.router(TenantMem))  # POST /v1/context, /v1/answer
    app.include_router(documents.router(TenantMem))  # documents and their chunks
    app.include_router(browser.router(settings))
    app.add_route("/mcp", mcp, include_in_schema=False)

    @app.get("/healthz")
    def healthz() -> JSONResponse:
        """No key needed. 200 when Neo4j answers and the schema is in place, else 503."""
        body: dict[str, Any] = {"version": __version__}
        try:
            runtime.ready_memory().ping()
        except StoreUnavailable as exc:
            return problems.store_unavailable(exc)
        except GraphMemError as exc:  # e.g. a database built for another embedding model
            return problems.problem(503, exc.title, exc.detail)
        body["neo4j"] = "ok"
        return JSONResponse(body)

    return app


def app_from_environment() -> FastAPI:
    """The app with settings from the environment: the factory each API process of
    `graphmem serve --workers N` calls (every process opens its own Memory)."""
    return create_app(Settings())
