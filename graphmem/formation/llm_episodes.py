"""The LLM path of episode formation: a `BoundaryFinder` and a `Narrator` that ask a model
through `graphmem.llm.LLMClient` (any OpenAI-compatible endpoint). In ``json_schema`` mode the
boundary reply's schema lists the only numbers it may hold (`boundary_schema`); the narrative's
is `Narrative`'s."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from graphmem.formation.observer import Turn
from graphmem.formation.prompts_episodes import boundary_messages, narrative_messages
from graphmem.llm.client import LLMClient


class Boundaries(BaseModel):
    boundaries: list[int] = Field(default_factory=list)


class Narrative(BaseModel):
    title: str = Field(min_length=1, max_length=300)
    narrative: str = Field(min_length=1, max_length=5000)


def boundary_schema(allowed: Sequence[int]) -> dict[str, Any]:
    """The reply's JSON schema with the numbers a boundary may have (none: an empty list)."""
    items: dict[str, Any] = {"type": "integer", "enum": list(allowed)} if allowed else {}
    return {"type": "object", "properties": {"boundaries": {
        "type": "array", "items": items, "maxItems": len(allowed)}},
        "required": ["boundaries"], "additionalProperties": False}


class LLMFinder:
    whole_stretch = False

    def __init__(self, client: LLMClient) -> None:
        self._client = client

    def find(self, window: Sequence[Turn], first_new: int) -> list[int]:
        reply = self._client.complete_structured(
            "episode_boundaries", boundary_messages(window, first_new), Boundaries,
            response_schema=boundary_schema(range(max(first_new, 1), len(window))))
        return sorted({b for b in reply.boundaries if max(first_new, 1) <= b < len(window)})


class LLMNarrator:
    def __init__(self, client: LLMClient) -> None:
        self._client = client
        self.name = f"llm:{client.model}"

    def narrate(self, turns: Sequence[Turn],
                others: Sequence[Sequence[Turn]] = ()) -> tuple[str, str]:
        """The model writes title and narrative from the episode's messages alone."""
        reply = self._client.complete_structured(
            "episode_narrative", narrative_messages(turns), Narrative)
        return reply.title.strip(), reply.narrative.strip()
