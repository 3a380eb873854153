"""The exception tree of graphmem. The API maps each class to one HTTP status in one handler.

    GraphMemError
    ├── InvalidInput        400/422: a field of the request is wrong (``field`` names it)
    │   └── TooLarge        413: the request is more work than one request may be (a budget)
    ├── NotFound            404: the id does not exist for this tenant
    ├── Conflict            409: an id already stored with other content (nothing was written)
    ├── Unauthorized        401: no key or an unknown key
    ├── Forbidden           403: the key may not do this (another owner, a write with a
    │                       read-only key, a tenant-wide call with an owner's key)
    ├── StoreUnavailable    503: Neo4j cannot be reached; retry later
    └── SchemaMismatch      500 at start-up: the database was built for another embedding model
"""

from __future__ import annotations


class GraphMemError(Exception):
    """Base class of every error graphmem raises on purpose."""

    status = 500
    title = "graphmem error"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class InvalidInput(GraphMemError):
    status = 422
    title = "invalid input"

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.problem = detail


class TooLarge(InvalidInput):
    """Over a per-request budget (e.g. characters or retrieval units in one batch): nothing was
    done; ``limit`` is the budget, ``actual`` the request's figure."""

    status = 413
    title = "request too large"

    def __init__(self, field: str, detail: str, *, limit: int, actual: int) -> None:
        super().__init__(field, detail)
        self.limit = limit
        self.actual = actual


class NotFound(GraphMemError):
    status = 404
    title = "not found"


class Conflict(GraphMemError):
    """``field`` names the input at fault (``messages[3].id``), when one is."""

    status = 409
    title = "conflict"

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.field = field


def in_use(where: str, ids: list[str]) -> str:
    """The one wording of an id taken with other content (``where``: ``messages[3]``, the
    first such item): the same whichever owner holds it, so a key limited to some owners
    learns only that the id is taken."""
    more = f" (and {len(ids) - 1} more: {ids[1:10]})" if len(ids) > 1 else ""
    return (f"{where}.id: {ids[0]!r} is already in use in this tenant with other "
            f"content{more}; nothing was written")


class Unauthorized(GraphMemError):
    status = 401
    title = "unauthorized"


class Forbidden(GraphMemError):
    """The caller's key may not do this (`graphmem.access.Access`); ``field`` names the input
    that asked for it, when one did."""

    status = 403
    title = "forbidden"

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.field = field


class StoreUnavailable(GraphMemError):
    status = 503
    title = "store unavailable"


class StoreBusy(StoreUnavailable):
    """Neo4j kept aborting the transaction as transient (lock contention, a deadlock it broke,
    memory pressure) until the driver's retries ran out: nothing was committed; the same request
    can be sent again."""

    title = "store busy"


class Contended(StoreBusy):
    """A write kept meeting concurrent writes to the same nodes (a racing enqueue or claim of
    the same job) inside one transaction: nothing was committed. The store layer runs the whole
    transaction again, as for a transient abort; the caller sees it only when that keeps
    failing (a 503, StoreBusy)."""


class SchemaMismatch(GraphMemError):
    status = 500
    title = "schema mismatch"
