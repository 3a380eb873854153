"""Retrieval: recall lists from Neo4j, fused by RRF, expanded along NEXT, packed under a budget.

The pure parts (fusion, expansion, context rendering, settings) need no database.
"""

from graphmem.retrieval.fusion import Fused, rrf
from graphmem.retrieval.settings import PRESETS, RetrievalSettings, preset

__all__ = ["PRESETS", "Fused", "RetrievalSettings", "preset", "rrf"]
