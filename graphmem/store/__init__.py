"""The store: the only package that talks to Neo4j. See `Store` and `TenantStore`."""

from graphmem.store.core import Store, native
from graphmem.store.tenant import Filters, TenantStore, Windows

__all__ = ["Filters", "Store", "TenantStore", "Windows", "native"]
