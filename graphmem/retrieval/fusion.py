"""Reciprocal rank fusion, and the lists derived from other lists before fusing: a covering
unit's hits credited to the messages it covers, and the session prior. Pure, no database."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

Ranked = Sequence[tuple[str, int]]
"""A ranked list as (id, rank) pairs, ranks from 1; several ids may share a rank."""


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
    return fuse({rule: list(enumerate_ranks(ids)) for rule, ids in ranked.items()}, k)


def enumerate_ranks(ids: Iterable[str]) -> Iterable[tuple[str, int]]:
    """An ordered id list as (id, rank) pairs, ranks from 1."""
    return ((id_, rank) for rank, id_ in enumerate(ids, start=1))


def fuse(ranked: Mapping[str, Ranked], k: int = 60,
         weights: Mapping[str, float] | None = None) -> list[Fused]:
    """`rrf` over lists with explicit ranks (ties allowed): score(id) = sum over lists of
    w / (k + rank), w the list's weight in ``weights`` (default 1); an id repeated inside one
    list counts once, at its first occurrence."""
    weights = weights or {}
    terms: dict[str, list[float]] = {}
    rules: dict[str, list[str]] = {}
    best: dict[str, int] = {}
    for rule, pairs in ranked.items():
        seen: set[str] = set()
        weight = weights.get(rule, 1.0)
        for id_, rank in pairs:
            if id_ in seen:
                continue
            seen.add(id_)
            terms.setdefault(id_, []).append(weight / (k + rank))
            rules.setdefault(id_, []).append(rule)
            best[id_] = min(best.get(id_, rank), rank)
    # fsum: the sum does not depend on the order of the lists, so ties stay ties
    fused = [Fused(i, math.fsum(t), tuple(rules[i]), best[i]) for i, t in terms.items()]
    fused.sort(key=lambda f: (-f.score, f.best_rank, f.id))
    return fused


def credit(units: Sequence[Sequence[str]],
           only: Collection[str] | None = None) -> list[tuple[str, int]]:
    """A ranked list of covering units (each given as the message ids it covers, best unit first)
    as a ranked list of messages: every message covered by the unit at rank r gets rank r (the
    first, best unit that covers it counts). With ``only``, messages outside it get nothing (a
    unit then re-ranks messages found otherwise, it adds none)."""
    out: dict[str, int] = {}
    for rank, members in enumerate(units, start=1):
        for id_ in members:
            if only is None or id_ in only:
                out.setdefault(id_, rank)
    return list(out.items())


def session_prior(fused: Sequence[Fused], session_of: Mapping[str, str],
                  depth: int = 1) -> list[tuple[str, int]]:
    """Rank sessions by their best candidates (a session scores the sum of the fused scores of
    its ``depth`` best candidates) and give every candidate its session's rank: a list that lifts
    the candidates of the sessions the query points at. Candidates of unknown session are left
    out."""
    best: dict[str, list[float]] = {}
    for f in fused:  # best first
        s = session_of.get(f.id)
        if s is not None and len(best.setdefault(s, [])) < depth:
            best[s].append(f.score)
    order = sorted(best, key=lambda s: (-math.fsum(best[s]), s))
    rank = {s: n for n, s in enumerate(order, start=1)}
    pairs = [(f.id, rank[session_of[f.id]]) for f in fused if f.id in session_of]
    return sorted(pairs, key=lambda p: p[1])
