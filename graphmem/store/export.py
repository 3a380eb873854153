"""The reads of an owner's export, bound to one tenant: one page of one kind of record, in id
order after a cursor (``cypher/queries/export/<kind>.cypher``; what a record holds is
`graphmem.lifecycle.export`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.store.tenant import TenantBound

if TYPE_CHECKING:
    from graphmem.lifecycle.export import ExportKind
    from graphmem.store.connection import Row


class ExportStore(TenantBound):
    def page(self, kind: ExportKind, owner: str, after: str, limit: int) -> list[Row]:
        """At most ``limit`` of ``owner``'s records of ``kind`` with ids after ``after``, in id
        order: rows {id, properties, links}; times as aware UTC datetimes."""
        return self._run(f"queries/export/{kind}", owner=owner, after=after, limit=limit)
