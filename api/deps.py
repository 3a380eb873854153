"""What the routes depend on: the app's parts (`Parts`: its `Runtime` and its keys, kept on
``app.state.parts`` by `create_app`) and, from them, the caller's tenant memory
(`tenant_memory`), which every route takes as ``mem: Annotated[TenantMemory,
Depends(tenant_memory)]``: routes live in module-level routers and are typed end to end, and a
reader (or a tool following a call) sees the type where the route is written."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Annotated

from fastapi import Path, Request
from starlette.concurrency import run_in_threadpool

from graphmem.config import Settings
from graphmem.errors import GraphMemError
from graphmem.service import Memory
from graphmem.tenant_memory import TenantMemory

from .auth import KeyRing, caller


class Runtime:
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


@dataclass(frozen=True)
class Parts:
    runtime: Runtime
    keys: KeyRing


# A coroutine function: FastAPI calls it on the event loop, where a plain function would cost a
# hand-off to a worker thread per request.
async def tenant_memory(request: Request) -> TenantMemory:
    """The caller's memory: its key's tenant, owners and rights (`graphmem.access.Access`),
    over the Memory once its schema is in place (until then the schema step, which talks to
    Neo4j, runs in a worker thread)."""
    parts: Parts = request.app.state.parts
    who = caller(parts.keys, request.scope)
    access = who.granted()
    runtime = parts.runtime
    if runtime.ready and runtime.memory is not None:
        memory = runtime.memory
    else:
        memory = await run_in_threadpool(runtime.ready_memory)
    return memory.for_tenant(access.tenant, access, who.name)

Name = Annotated[str, Path(min_length=1)]
"""An id in a path (``{x:path}``: ids may hold "/", best sent as %2F)."""
