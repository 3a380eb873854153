"""Prompts of the LLM path of episode formation: boundaries in a window, and an episode's title
and narrative. Plain functions building chat messages; replies are validated by pydantic models
in `graphmem.formation.llm_episodes`."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem import temporal
from graphmem.formation.observer import Turn

BOUNDARY_SYSTEM = """You segment a conversation into episodes: coherent stretches about one \
topic or event. You see a window of numbered messages. Messages before the line "--- new ---" \
are context, already segmented. For the messages after it, say at which numbers a NEW episode \
starts (a change of topic, a new event, a long pause). Most windows have zero or one boundary.
Answer with JSON only: {"boundaries": [<message numbers>]}"""

NARRATIVE_SYSTEM = """You write the memory of one episode of a conversation: a short title \
(at most 12 words) and a narrative of 1-4 sentences in the third person that keeps every concrete \
fact: names, places, numbers, and dates. Dates in brackets after a time expression are resolved; \
write the resolved date. Do not invent anything.
Answer with JSON only: {"title": "...", "narrative": "..."}"""


def _line(n: int, t: Turn) -> str:
    text = temporal.annotate(t.text, t.timestamp)
    return f"{n}. [{t.timestamp:%Y-%m-%d %H:%M}] {t.speaker}: {text}"


def boundary_messages(window: Sequence[Turn], first_new: int) -> list[dict[str, str]]:
    lines = []
    for n, t in enumerate(window):
        if n == first_new and first_new > 0:
            lines.append("--- new ---")
        lines.append(_line(n, t))
    return [{"role": "system", "content": BOUNDARY_SYSTEM},
            {"role": "user", "content": "\n".join(lines)}]


def narrative_messages(turns: Sequence[Turn]) -> list[dict[str, str]]:
    body = "\n".join(_line(n, t) for n, t in enumerate(turns))
    return [{"role": "system", "content": NARRATIVE_SYSTEM}, {"role": "user", "content": body}]
