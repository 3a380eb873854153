"""Clustering cases by procedure: what a run did, not whom it served. Pure.

Two cases are compared by their procedures (`procedure_tokens`: the ordered tool calls, the
reads made before each write, each write's arguments as typed slots and the reads that checked
the very value it changed), weighted by TF-IDF over the cases being clustered and compared by
cosine; `REQUEST_WEIGHT` mixes in the cosine of their requests' embeddings, taken with every
identifier masked (`graphmem.procedural.slots.mask`). No identifier, name or value enters:
renaming every identifier of a run leaves its cluster as it was.

The cases are then joined by average linkage (scipy) and the tree is cut where the silhouette
(scikit-learn) of the clusters is highest: the number of clusters is read off the data being
clustered, no distance threshold is fitted. A best silhouette of zero or less (no split
better than none) leaves one cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.metrics.pairwise import cosine_distances

from graphmem.procedural.models import Action

REQUEST_WEIGHT = 0.0
"""The share of the requests' distance (identifiers masked) in the distance of two cases; the
procedures' distance has the rest. 0: runs are compared by what they did only. Checked by
cross-validation over halves of the tau-bench airline development tasks (`graphmem bench tau
--train ... --train-tasks ...`, ``clustering.cross_validated``: the weight with the best ARI
against kind plus task less customer on one half, scored on the other): tasks 0-14 chose 0.25,
which scores on tasks 15-29 as 0 does (within 0.01); tasks 15-29 chose 0.75, which collapses
tasks 0-14 into 2 clusters. Only 0 and 0.25 hold on both halves."""
REQUEST_WEIGHTS = (0.0, 0.25, 0.5, 0.75)
"""The weights that cross-validation compares."""
MAX_CUTS = 60
"""Cuts whose silhouette is computed: every number of clusters up to this, else this many
spread geometrically (the work stays bounded for thousands of cases)."""
SAME = 1e-9


@dataclass(frozen=True)
class Point:
    """What clustering sees of a case: its request's embedding (identifiers masked) and its
    actions (tools, writes, typed slots, checks)."""

    id: str
    vector: Sequence[float]
    actions: Sequence[Action]


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


def procedure_tokens(actions: Sequence[Action]) -> list[str]:
    """A procedure as tokens: each tool (consecutive repeats as one), each pair of tools in
    order (with the start and the end), each write, each read made before a write
    (``cancel<get_reservation``), each slot a write passed (``cancel.reservation_id:reservation
    id``) and each check on the value it changed (``cancel?get_reservation:reservation id``).
    A case that called nothing is the token ``no-call``."""
    if not actions:
        return ["no-call"]
    tools = collapse([a.tool for a in actions])
    out = [f"tool:{t}" for t in tools]
    out += [f"then:{a}>{b}" for a, b in zip(["^", *tools], [*tools, "$"], strict=True)]
    reads: list[str] = []
    for a in actions:
        if not a.writes:
            reads.append(a.tool)
            continue
        out.append(f"write:{a.tool}")
        out += [f"before:{a.tool}<{r}" for r in dict.fromkeys(reads)]
        out += [f"slot:{a.tool}.{k}:{v}" for k, v in a.slots.items()]
        out += [f"check:{a.tool}?{c}" for c in a.checked]
    return out


def distances(points: Sequence[Point], request_weight: float = REQUEST_WEIGHT) -> NDArray[
        np.float64]:
    """Pairwise distances in [0, 1]: cosine between the TF-IDF weighted procedures (weights
    from these points), mixed with the cosine between the request vectors by
    ``request_weight``."""
    docs = [procedure_tokens(p.actions) for p in points]
    tfidf = TfidfVectorizer(analyzer=lambda doc: doc, sublinear_tf=True, lowercase=False)
    found = cosine_distances(tfidf.fit_transform(docs))
    if request_weight > 0:
        vectors = np.asarray([list(p.vector) for p in points], dtype=np.float64)
        found = (1 - request_weight) * found + request_weight * cosine_distances(vectors)
    np.fill_diagonal(found, 0.0)
    clipped: NDArray[np.float64] = np.clip(found, 0.0, 1.0)
    return clipped


def cuts(n: int) -> list[int]:
    """The numbers of clusters the silhouette is computed for, among ``n`` points."""
    if n - 1 <= MAX_CUTS:
        return list(range(2, n))
    return sorted({int(k) for k in np.rint(np.geomspace(2, n - 1, MAX_CUTS))})


def labels(found: NDArray[np.float64]) -> list[int]:
    """Cluster labels from a distance matrix: average linkage, cut at the number of clusters
    whose silhouette is highest (the fewest on ties); one cluster when no cut has a positive
    silhouette; with fewer than three points, identical ones together."""
    n = len(found)
    if n < 3:
        return [0] * n if n < 2 or found[0, 1] <= SAME else [0, 1]
    tree = linkage(squareform(found, checks=False), method="average")
    best: tuple[float, list[int]] = (0.0, [0] * n)
    for k in cuts(n):
        cut = [int(x) for x in fcluster(tree, k, criterion="maxclust")]
        if len(set(cut)) < 2 or len(set(cut)) == n:
            continue
        score = float(silhouette_score(found, cut, metric="precomputed"))
        if score > best[0] + SAME:
            best = (score, cut)
    return best[1]


def cluster(points: Sequence[Point], request_weight: float = REQUEST_WEIGHT) -> list[list[str]]:
    """Clusters of cases (ids sorted inside, the largest first, then by first id). Input order
    does not matter: points are sorted by id first."""
    ordered = sorted(points, key=lambda p: p.id)
    if not ordered:
        return []
    found = labels(distances(ordered, request_weight))
    groups: dict[int, list[str]] = {}
    for p, label in zip(ordered, found, strict=True):
        groups.setdefault(label, []).append(p.id)
    return sorted((sorted(g) for g in groups.values()), key=lambda c: (-len(c), c[0]))


def cluster_id(owner: str, members: Sequence[str]) -> str:
    key = "\x1f".join([owner, *sorted(members)])
    return "cl-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def adjusted_rand_index(truth: Sequence[str], found: Sequence[str]) -> float:
    """ARI of two labelings of the same items (1: identical partitions, ~0: chance);
    scikit-learn's, 1.0 for fewer than two items."""
    if len(truth) != len(found):
        raise ValueError("labelings of different lengths")
    if len(truth) < 2:
        return 1.0
    return float(adjusted_rand_score(list(truth), list(found)))
