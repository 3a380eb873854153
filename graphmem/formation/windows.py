"""Turn windows of a session: every stretch of 3 and of 5 consecutive turns, a recall unit of its
own beside the sentence units (see README "Retrieval"). Pure: which windows a session should
have, from its turns in chain order; `graphmem.formation.run` writes the difference."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

SIZES = (3, 5)
TURN_CHARS = 1000
"""Each turn's text is cut to this many characters in a window (the model reads 256 tokens)."""


@dataclass(frozen=True)
class WindowTurn:
    id: str
    speaker: str
    text: str
    timestamp: datetime


@dataclass(frozen=True)
class WindowDraft:
    id: str
    size: int
    turns: tuple[WindowTurn, ...]

    @property
    def text(self) -> str:
        return "\n".join(f"{t.speaker}: {t.text[:TURN_CHARS]}" for t in self.turns)

    def row(self, embedding: list[float]) -> dict[str, Any]:
        """The properties `create.cypher` writes."""
        first = self.turns[0]
        return {"id": self.id, "size": self.size, "start_id": first.id,
                "message_ids": [t.id for t in self.turns], "first_at": first.timestamp,
                "last_at": self.turns[-1].timestamp, "search_text": self.text,
                "embedding": embedding,
                "caption": f"{self.size} turns from {first.speaker}: {first.text[:40]}"}


def window_id(owner: str, session_id: str, size: int, message_ids: Sequence[str]) -> str:
    """Deterministic, and changed by any change of the turns covered (a late message in the
    stretch makes a new window; the old one is stale)."""
    key = "\x1f".join([owner, session_id, str(size), *message_ids])
    return "w-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def plan_windows(owner: str, session_id: str, turns: Sequence[WindowTurn],
                 sizes: Sequence[int] = SIZES) -> list[WindowDraft]:
    """Every run of ``size`` consecutive turns, for each size (a session shorter than a size
    gets one window of all its turns, if it has at least two)."""
    out: dict[str, WindowDraft] = {}
    for size in sizes:
        span = min(size, len(turns))
        if span < 2:
            continue
        for start in range(len(turns) - span + 1):
            part = tuple(turns[start : start + span])
            id_ = window_id(owner, session_id, size, [t.id for t in part])
            out.setdefault(id_, WindowDraft(id_, size, part))
    return list(out.values())
