"""Entities in Neo4j, bound to one tenant: ``(:Entity {tenant, owner, name, kind})`` and the
``(:Message)-[:MENTIONS]->(:Entity)`` edges (written with the messages, in the ingest
transaction: `write_mentions_tx`), and the neighbourhood the ``graph`` search method walks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.store.tenant import TenantBound

if TYPE_CHECKING:
    from graphmem.store.core import Row


def write_mentions_tx(tx: ManagedTransaction, tenant: str, rows: Sequence[Row]) -> None:
    """Inside a write transaction: MERGE the entities of ``rows`` ({message_id, owner,
    entities: [{name, kind}]}) and their MENTIONS edges from the (already written) messages."""
    if rows:
        tx.run(cypher.load("queries/entities/write_mentions"), tenant=tenant,
               rows=list(rows)).consume()


class EntityStore(TenantBound):
    def write(self, rows: Sequence[Row]) -> None:
        """`write_mentions_tx` in a transaction of its own (idempotent)."""
        tenant = self.tenant
        self._store.write_tx(lambda tx: write_mentions_tx(tx, tenant, rows))

    def neighbourhood(self, owner: str, ids: Sequence[str], names: Sequence[str],
                      max_degree: int, max_entities: int, per_entity: int) -> Row:
        """The graph around the candidates ``ids`` and the entities ``names`` (see
        `neighbourhood.cypher`'s columns), in one query."""
        rows = self._run("queries/entities/neighbourhood", owner=owner, ids=list(ids),
                         names=list(names), max_degree=max_degree, max_entities=max_entities,
                         per_entity=per_entity)
        out: dict[str, Any] = rows[0] if rows else {}
        return out
