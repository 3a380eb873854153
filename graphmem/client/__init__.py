"""The Python client of the graphmem HTTP API: `GraphMem` (sync) and `AsyncGraphMem` (asyncio),
over httpx, with the request and reply models of `graphmem.wire` and the exceptions of
`graphmem.client.errors`. Importing it loads pydantic and httpx only, not the server.

    from graphmem.client import GraphMem, NotFoundError

    with GraphMem("http://127.0.0.1:8000", api_key="...") as gm:
        hits = gm.search("where does alice live?", owner="alice").hits
"""

from graphmem.client.aio import AsyncGraphMem
from graphmem.client.base import Retry
from graphmem.client.errors import (
    APIError,
    AuthenticationError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    TooLargeError,
    TransportError,
    TransportTimeout,
    UnavailableError,
)
from graphmem.client.sync import GraphMem

__all__ = [
    "APIError",
    "AsyncGraphMem",
    "AuthenticationError",
    "ConflictError",
    "GraphMem",
    "InvalidInputError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "Retry",
    "ServerError",
    "TooLargeError",
    "TransportError",
    "TransportTimeout",
    "UnavailableError",
]
