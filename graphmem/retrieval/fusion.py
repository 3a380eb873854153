"""Reciprocal rank fusion: pure, no database."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    rules: tuple[str, ...]
    """The lists that returned this id, in the order the lists were given."""
    best_rank: int


def rrf(ranked: Mapping[str, Sequence[str]], k: int = 60) -> list[Fused]:
    """Fuse ranked id lists: score(id) = sum over lists of 1 / (k + rank), ranks from 1.

    A repeated id inside one list counts once, at its best rank. Ties are broken by the best rank
    in any list, then by id, so the order is deterministic.
    """
    terms: dict[str, list[float]] = {}
    rules: dict[str, list[str]] = {}
    best: dict[str, int] = {}
    for rule, ids in ranked.items():
        seen: set[str] = set()
        for rank, id_ in enumerate(ids, start=1):
            if id_ in seen:
                continue
            seen.add(id_)
            terms.setdefault(id_, []).append(1.0 / (k + rank))
            rules.setdefault(id_, []).append(rule)
            best[id_] = min(best.get(id_, rank), rank)
    # fsum: the sum does not depend on the order of the lists, so ties stay ties
    fused = [Fused(i, math.fsum(t), tuple(rules[i]), best[i]) for i, t in terms.items()]
    fused.sort(key=lambda f: (-f.score, f.best_rank, f.id))
    return fused
