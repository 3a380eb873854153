"""graphmem: long-term memory for AI agents on Neo4j."""

from graphmem.config import Settings
from graphmem.errors import (
    Conflict,
    GraphMemError,
    InvalidInput,
    NotFound,
    SchemaMismatch,
    StoreUnavailable,
    Unauthorized,
)
from graphmem.models import MessageIn, SearchRequest, SearchResult
from graphmem.service import Memory

__version__ = "0.1.0"
__all__ = [
    "Conflict",
    "GraphMemError",
    "InvalidInput",
    "Memory",
    "MessageIn",
    "NotFound",
    "SchemaMismatch",
    "SearchRequest",
    "SearchResult",
    "Settings",
    "StoreUnavailable",
    "Unauthorized",
]
