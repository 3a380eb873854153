"""Clustering cases: a similarity graph (intent embeddings, action sequences and the things named)
split into communities by Louvain with a fixed seed, so the same cases give the same clusters.

Two cases are linked when their similarity reaches `EDGE_AT`, and each case is also linked to its
single most similar case when that reaches `NEAREST_AT`: a request put once more in other words,
or a run that wandered, joins its nearest neighbour instead of standing alone, while links between
cases that are not each other's nearest need the higher threshold. Pure."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from graphmem.procedural.boundaries import cosine

SEED = 7
INTENT_WEIGHT = 0.7
"""Of what a case asked and did: the intent embedding's share (the action sequence has the rest)."""
ENTITY_WEIGHT = 0.7
"""The share of the entities named (ids, codes, numbers): the same request about the same things."""
EDGE_AT = 0.45
"""Two cases are linked when their similarity reaches this (chosen on tau-bench airline dev)."""
NEAREST_AT = 0.2
"""A case is linked to its most similar case when their similarity reaches this."""
RESOLUTION = 1.0


@dataclass(frozen=True)
class Point:
    """What clustering sees of a case."""

    id: str
    vector: Sequence[float]
    tools: Sequence[str]
    writes: Sequence[str]
    entities: Sequence[str] = ()


def collapse(tokens: Sequence[str]) -> list[str]:
    """Consecutive repeats as one (three look-ups in a row are one look-up step)."""
    return [t for i, t in enumerate(tokens) if i == 0 or tokens[i - 1] != t]


def alignment(a: Sequence[str], b: Sequence[str]) -> dict[int, int]:
    """Positions of ``a`` matched to positions of ``b`` by a longest common subsequence (dynamic
    programming; ties resolved towards ``a``'s order)."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if a[i] == b[j]
                           else max(table[i + 1][j], table[i][j + 1]))
    out, i, j = {}, 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            out[i] = j
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def lcs(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """A longest common subsequence of ``a`` and ``b``."""
    return [a[i] for i in alignment(a, b)]


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def action_similarity(a: Point, b: Point) -> float:
    """Half the order (LCS of the collapsed tool sequences over the longer one), half what was
    changed (Jaccard of the written tools). Two cases that called nothing are alike."""
    ta, tb = collapse(a.tools), collapse(b.tools)
    order = 1.0 if not ta and not tb else len(lcs(ta, tb)) / max(len(ta), len(tb))
    return 0.5 * order + 0.5 * jaccard(a.writes, b.writes)


def similarity(a: Point, b: Point, intent_weight: float = INTENT_WEIGHT,
               entity_weight: float = ENTITY_WEIGHT) -> float:
    """What was asked (intent cosine) and done (actions), mixed with the things named (entity
    Jaccard; left out when neither case names any)."""
    asked_done = (intent_weight * cosine(a.vector, b.vector)
                  + (1.0 - intent_weight) * action_similarity(a, b))
    if not a.entities and not b.entities:
        return asked_done
    return (1.0 - entity_weight) * asked_done + entity_weight * jaccard(a.entities, b.entities)


def graph(points: Sequence[Point], edge_at: float = EDGE_AT,
          intent_weight: float = INTENT_WEIGHT, nearest_at: float = NEAREST_AT) -> nx.Graph:
    """The similarity graph: an edge for every pair at ``edge_at`` or more, and from each case to
    its most similar other case (the first by order of ``points`` on ties) at ``nearest_at`` or
    more. Edges are weighted by similarity."""
    g = nx.Graph()
    g.add_nodes_from(p.id for p in points)
    nearest: dict[int, tuple[float, int]] = {}
    for i, a in enumerate(points):
        for j in range(i + 1, len(points)):
            s = similarity(a, points[j], intent_weight)
            if s >= edge_at:
                g.add_edge(a.id, points[j].id, weight=s)
            for k, other in ((i, j), (j, i)):
                if k not in nearest or s > nearest[k][0]:
                    nearest[k] = (s, other)
    for i, (s, j) in nearest.items():
        if s >= nearest_at:
            g.add_edge(points[i].id, points[j].id, weight=s)
    return g


def cluster(points: Sequence[Point], edge_at: float = EDGE_AT,
            intent_weight: float = INTENT_WEIGHT, resolution: float = RESOLUTION,
            seed: int = SEED, nearest_at: float = NEAREST_AT) -> list[list[str]]:
    """Communities of cases (ids sorted inside, the largest first, then by first id). Input order
    does not matter: points are sorted by id before the graph is built."""
    ordered = sorted(points, key=lambda p: p.id)
    g = graph(ordered, edge_at, intent_weight, nearest_at)
    found = nx.community.louvain_communities(g, weight="weight", resolution=resolution,
                                             seed=seed)
    groups = [sorted(c) for c in found]
    return sorted(groups, key=lambda c: (-len(c), c[0]))


def cluster_id(owner: str, members: Sequence[str]) -> str:
    key = "\x1f".join([owner, *sorted(members)])
    return "cl-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def adjusted_rand_index(truth: Sequence[str], found: Sequence[str]) -> float:
    """ARI of two labelings of the same items (1: identical partitions, ~0: chance)."""
    if len(truth) != len(found):
        raise ValueError("labelings of different lengths")
    n = len(truth)
    if n < 2:
        return 1.0

    def pairs(k: int) -> float:
        return k * (k - 1) / 2

    both = math.fsum(pairs(c) for c in Counter(zip(truth, found, strict=True)).values())
    rows = math.fsum(pairs(c) for c in Counter(truth).values())
    cols = math.fsum(pairs(c) for c in Counter(found).values())
    expected = rows * cols / pairs(n)
    top = (rows + cols) / 2
    if top == expected:
        return 1.0
    return (both - expected) / (top - expected)
