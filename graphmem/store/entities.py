"""Entities in Neo4j, bound to one tenant: the neighbourhood the ``graph`` search method walks.
(``(:Entity {tenant, owner, name, kind})`` and the ``(:Message)-[:MENTIONS]->(:Entity)`` edges
are written with the messages, in the ingest transaction: `TenantStore.write_messages`.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphmem.store.tenant import TenantBound

if TYPE_CHECKING:
    from graphmem.store.connection import Row


class EntityStore(TenantBound):
    def neighbourhood(self, owner: str, ids: Sequence[str], names: Sequence[str],
                      max_degree: int, max_entities: int, per_entity: int) -> Row:
        """The graph around the candidates ``ids`` and the entities ``names`` (see
        `neighbourhood.cypher`'s columns), in one query."""
        rows = self._run("queries/entities/neighbourhood", owner=owner, ids=list(ids),
                         names=list(names), max_degree=max_degree, max_entities=max_entities,
                         per_entity=per_entity)
        out: dict[str, Any] = rows[0] if rows else {}
        return out
