"""graphmem: long-term memory for AI agents on Neo4j.

The names below load on first use (module ``__getattr__``), so ``import graphmem.client`` and
``import graphmem.wire`` pull in pydantic and httpx only, never the server's stack (Neo4j driver,
embedding model, FastAPI, OpenAI client).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
_LAZY = {
    "Settings": "graphmem.config",
    "Conflict": "graphmem.errors",
    "GraphMemError": "graphmem.errors",
    "InvalidInput": "graphmem.errors",
    "NotFound": "graphmem.errors",
    "SchemaMismatch": "graphmem.errors",
    "StoreUnavailable": "graphmem.errors",
    "Unauthorized": "graphmem.errors",
    "MessageIn": "graphmem.models",
    "SearchRequest": "graphmem.models",
    "SearchResult": "graphmem.models",
    "Memory": "graphmem.service",
}
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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
