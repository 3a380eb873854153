"""`Memory`: the process's `Parts` (the store, the models, the pools, the services) and the one
way in, `Memory.for_tenant(name)`: a `TenantMemory` that checks every call against the caller's
access and does its work through `TenantOps`. The API, MCP, the CLI and the benchmarks go
through it.

Nothing here takes a tenant first: `Memory.ops(tenant)` gives a tenant's operations without
the access checks, and `Memory.stores(tenant)` its stores, which the services work over (for
tests and maintenance scripts)."""

from __future__ import annotations

from graphmem.access import Access
from graphmem.parts import CONTEXT_SKILLS, DEFAULT_METHOD, SKILL_CASES, Parts
from graphmem.store import TenantStores
from graphmem.tenant_memory import TenantMemory
from graphmem.tenant_ops import TenantOps

__all__ = ["CONTEXT_SKILLS", "DEFAULT_METHOD", "SKILL_CASES", "Memory"]


class Memory(Parts):
    """Long-term memory over one Neo4j database. Thread-safe; one per process is enough.

    >>> mem = Memory.open(Settings())            # connects, applies the schema, loads the model
    >>> tm = mem.for_tenant("acme")
    >>> tm.messages.ingest([MessageIn(...)])
    >>> tm.search(SearchRequest(query="...", owner="alice"))
    """

    def for_tenant(self, name: str, access: Access | None = None,
                   caller: str | None = None) -> TenantMemory:
        """One tenant's memory: the way in for the API, the MCP server, the CLI and the bench;
        ``access`` limits what it may do (default: everything, as a tenant's key), ``caller``
        names who uses it in the audit records (an API key's id, ``cli``, ``mcp-stdio``)."""
        return TenantMemory(self, name, access, caller)

    def ops(self, tenant: str) -> TenantOps:
        """``tenant``'s operations without access checks: what `for_tenant`'s memory does once
        a call is allowed (for tests and maintenance scripts)."""
        return TenantOps(self, tenant)

    def stores(self, tenant: str) -> TenantStores:
        """``tenant``'s stores, what the services (`facts`, `procedural`, `documents`,
        `former`) work over (for tests, benchmarks and maintenance scripts)."""
        return self.store.tenant_stores(tenant)
