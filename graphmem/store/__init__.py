"""The store: the only package that talks to Neo4j. See `Store`, `TenantStore` and
`TenantStores` (every store of one tenant)."""

from graphmem.store.bundle import TenantStores
from graphmem.store.core import Store, native
from graphmem.store.tenant import Filters, TenantStore, Windows

__all__ = ["Filters", "Store", "TenantStore", "TenantStores", "Windows", "native"]
