"""The Observer: walks a session in windows and finds where one episode ends and the next begins.

Pure: no database, no model. Windows are ``size`` messages long and overlap by ``overlap``: the
first ``overlap`` messages of a window are context already decided by the previous window. A
`BoundaryFinder` decides, for the new positions of a window, where a new episode starts; two are
provided: `HeuristicFinder` (time gaps and drops in embedding similarity between neighbouring
messages, no LLM; it sees a whole stretch at once, since a dip at a window's edge has no
neighbour to judge it by) and, in `graphmem.formation.llm_episodes`, one that asks a model
window by window.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

WINDOW = 8
OVERLAP = 2


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str
    timestamp: datetime
    vector: tuple[float, ...] = ()


class BoundaryFinder(Protocol):
    """Finds episode starts. A finder may also say ``whole_stretch = True``: give it the whole
    stretch as one window (a cheap finder judges dips better with all the context); otherwise
    `segment` walks windows of ``size`` with ``overlap`` (a model's view)."""

    def find(self, window: Sequence[Turn], first_new: int) -> list[int]:
        """Positions ``p >= max(first_new, 1)`` of ``window`` where a new episode starts."""
        ...


def windows(n: int, size: int = WINDOW, overlap: int = OVERLAP) -> Iterator[tuple[int, int]]:
    """(start, first_new) of each window over n turns: starts 0, size-overlap, ...; the first
    window has no context, later ones have ``overlap`` turns of it."""
    if n <= 0:
        return
    step = size - overlap
    start = 0
    while True:
        yield start, 0 if start == 0 else overlap
        if start + size >= n:
            return
        start += step


def segment(turns: Sequence[Turn], finder: BoundaryFinder, size: int = WINDOW,
            overlap: int = OVERLAP) -> list[list[Turn]]:
    """Split a session's turns (in order) into episodes; every turn lands in exactly one."""
    if getattr(finder, "whole_stretch", False):
        size = max(size, len(turns))
    starts: set[int] = set()
    for start, first_new in windows(len(turns), size, overlap):
        window = turns[start : start + size]
        starts.update(start + p for p in finder.find(window, first_new)
                      if max(first_new, 1) <= p < len(window))
    episodes: list[list[Turn]] = []
    for i, turn in enumerate(turns):
        if i == 0 or i in starts:
            episodes.append([])
        episodes[-1].append(turn)
    return episodes


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def mean(vectors: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """The element-wise mean; () for no vectors."""
    if not vectors:
        return ()
    return tuple(sum(col) / len(vectors) for col in zip(*vectors, strict=True))


@dataclass(frozen=True)
class HeuristicFinder:
    """No LLM. A boundary where the conversation pauses (``gap``), or where the similarity of the
    ``span`` turns on either side dips: TextTiling's depth score on sentence embeddings, the
    climb from the dip to the nearest peak on each side, at least ``depth``. Chat turns are all
    rather alike (similarities of 0.7-0.95), so the dip is judged against its neighbours, not
    against a fixed level. Episodes keep at least ``min_turns`` turns."""

    gap: timedelta = timedelta(minutes=30)
    depth: float = 0.15
    span: int = 2
    min_turns: int = 3
    whole_stretch: bool = True

    def find(self, window: Sequence[Turn], first_new: int) -> list[int]:
        sims = [1.0] + [self._similarity(window, p) for p in range(1, len(window))]
        found: list[int] = []
        # the context is decided already, but where its episode began is not known here
        last = 0 if first_new == 0 else first_new - self.min_turns
        for p in range(max(first_new, 1), len(window)):
            paused = window[p].timestamp - window[p - 1].timestamp > self.gap
            valley = sims[p] <= sims[p - 1] and (p + 1 >= len(sims) or sims[p] <= sims[p + 1])
            dip = valley and _depth(sims, p) >= self.depth
            if paused or (dip and p - last >= self.min_turns and len(window) - p >= 2):
                found.append(p)
                last = p
        return found

    def _similarity(self, window: Sequence[Turn], p: int) -> float:
        before = [t.vector for t in window[max(0, p - self.span) : p] if t.vector]
        after = [t.vector for t in window[p : p + self.span] if t.vector]
        if not before or not after:
            return 1.0
        return cosine(mean(before), mean(after))


def _depth(sims: Sequence[float], p: int) -> float:
    """How far sims[p] lies below the peaks reached climbing left and right from it."""
    if p <= 1 or p >= len(sims) - 1:
        return 0.0
    left = right = sims[p]
    i = p - 1
    while i >= 1 and sims[i] >= left:
        left, i = sims[i], i - 1
    j = p + 1
    while j < len(sims) and sims[j] >= right:
        right, j = sims[j], j + 1
    return (left - sims[p]) + (right - sims[p])
