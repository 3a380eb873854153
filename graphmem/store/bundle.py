"""`TenantStores`: every store of one tenant, bound once. The services (facts, procedural
memory, documents, formation) and a search work over one of these, so none of them takes a
tenant name or builds a store itself. Get it from `Store.tenant_stores(name)`."""

from __future__ import annotations

from dataclasses import dataclass

from graphmem.store.connection import Connection
from graphmem.store.documents import DocumentStore
from graphmem.store.episodes import EpisodeStore
from graphmem.store.facts import FactStore
from graphmem.store.procedural import ProceduralStore
from graphmem.store.sparse import SparseStore
from graphmem.store.tenant import TenantStore
from graphmem.store.windows import WindowStore


@dataclass(frozen=True)
class TenantStores:
    """One tenant's stores: messages, facts, episodes, windows, word pieces, runs and skills,
    and documents. Cheap to make (each holds the connection and the tenant's name)."""

    tenant: str
    messages: TenantStore
    facts: FactStore
    episodes: EpisodeStore
    windows: WindowStore
    sparse: SparseStore
    procedural: ProceduralStore
    documents: DocumentStore

    @classmethod
    def bind(cls, store: Connection, tenant: str) -> TenantStores:
        return cls(tenant, TenantStore(store, tenant), FactStore(store, tenant),
                   EpisodeStore(store, tenant), WindowStore(store, tenant),
                   SparseStore(store, tenant), ProceduralStore(store, tenant),
                   DocumentStore(store, tenant))
