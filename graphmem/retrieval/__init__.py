"""Retrieval: recall lists from Neo4j, fused by RRF, expanded along NEXT, packed under a budget.

The pure parts (fusion, expansion, context rendering, recipes) need no database.
"""

from graphmem.retrieval.fusion import Fused, rrf
from graphmem.retrieval.recipes import PRESETS, RECIPES, Recipe, recipe

__all__ = ["PRESETS", "RECIPES", "Fused", "Recipe", "recipe", "rrf"]
