"""`Store`: the connection to one Neo4j database (`graphmem.store.connection`), its schema
(`graphmem.store.schema`), `Store.tenant(name)`, which hands out a `TenantStore` whose every
query is bound to that tenant, so isolation never depends on a caller remembering a filter, and
`Store.tenant_stores(name)`, every store of that tenant (`graphmem.store.bundle`).
The store package is the only code that talks to Neo4j."""

from __future__ import annotations

from graphmem.store import schema
from graphmem.store.bundle import TenantStores
from graphmem.store.connection import (
    VECTOR_INDEXES,
    Connection,
    Row,
    SearchFailed,
    index_quantized,
    native,
    rows,
    schema_statement,
)
from graphmem.store.tenant import TenantStore

__all__ = ["VECTOR_INDEXES", "Row", "SearchFailed", "Store", "TenantStores", "index_quantized",
           "native", "rows", "schema_statement"]


class Store(Connection):
    """The connection, with the schema steps and the tenant-bound stores."""

    def apply_schema(self, model: str, dimensions: int, timeout_s: float = 300.0) -> None:
        """See `graphmem.store.schema.apply_schema`."""
        schema.apply_schema(self, model, dimensions, timeout_s)

    def embedding_meta(self) -> Row | None:
        """Which embedding model built this database ({model, dimensions, created_at}); None on
        a new database."""
        return schema.embedding_meta(self)

    def await_online(self, timeout_s: float) -> None:
        schema.await_online(self, timeout_s)

    def tenant(self, tenant: str) -> TenantStore:
        return TenantStore(self, tenant)

    def tenant_stores(self, tenant: str) -> TenantStores:
        return TenantStores.bind(self, tenant)
