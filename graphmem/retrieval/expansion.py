"""Neighbour expansion and budgeted selection: pure, no database.

A nucleus is a fused hit. Its window is the chronological list of message ids around it in its
session (``before`` earlier, the nucleus, ``after`` later), as the store reads them along ``NEXT``.
Selection scores every message of every window by its nuclei's fused scores, decayed with the
distance (see `select`), and takes the best until the message budget is spent. Windows that
overlap or touch merge into one cluster later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphmem.retrieval.fusion import Fused


@dataclass(frozen=True)
class Selected:
    id: str
    score: float
    """Propagated score: the sum over the windows holding it of nucleus score x decay^distance."""
    rules: tuple[str, ...]
    nucleus: bool


def proximity_order(window: Sequence[str], nucleus: str) -> list[str]:
    """The window's ids by distance from the nucleus; at equal distance the later one first."""
    if nucleus not in window:
        return [nucleus]
    centre = window.index(nucleus)
    return sorted(window, key=lambda i: (abs(window.index(i) - centre), window.index(i) < centre))


def select(
    nuclei: Sequence[Fused],
    windows: Mapping[str, Sequence[str]],
    budget: int | None = None,
    decay: float = 0.35,
) -> list[Selected]:
    """Choose messages by propagated score.

    Each message of a nucleus's window earns ``nucleus.score * decay ** distance`` (the nucleus
    itself at distance 0); a message in several windows adds its earnings up, so a turn between
    two hits outranks one beside a single hit. Messages are taken best first (ties: the earlier
    nucleus, then the nearer one) until ``budget``; with no budget, every window is taken whole.
    """
    nucleus_rules = {n.id: n.rules for n in nuclei}
    score: dict[str, float] = {}
    first: dict[str, tuple[int, int]] = {}
    neighbour: set[str] = set()
    for rank, n in enumerate(nuclei):
        window = windows.get(n.id, [n.id])
        centre = window.index(n.id) if n.id in window else 0
        for id_ in proximity_order(window, n.id):
            distance = abs(window.index(id_) - centre) if id_ in window else 0
            score[id_] = score.get(id_, 0.0) + n.score * decay**distance
            first.setdefault(id_, (rank, distance))
            if distance:
                neighbour.add(id_)
    ranked = sorted(score, key=lambda i: (-score[i], first[i]))
    chosen = ranked if budget is None else ranked[:budget]
    return [
        Selected(id_, score[id_],
                 (*nucleus_rules.get(id_, ()), *(("neighbour",) if id_ in neighbour else ())),
                 id_ in nucleus_rules)
        for id_ in chosen
    ]


def select_heads(
    fused: Sequence[Fused],
    windows: Mapping[str, Sequence[str]],
    budget: int | None,
    k: int,
    decay: float,
) -> list[Selected]:
    """`select` as a search runs it: under a ``budget`` every fused candidate is a nucleus and
    the first ``budget`` bring their windows; without one the first ``k`` are the nuclei, each
    with its window. ``windows`` may hold more (only the heads' are used)."""
    nuclei = fused if budget is not None else fused[:k]
    heads = {n.id for n in nuclei[: budget if budget is not None else len(nuclei)]}
    return select(nuclei, {i: w for i, w in windows.items() if i in heads}, budget, decay)


def clusters(ordered_ids: Sequence[str], links: set[tuple[str, str]]) -> list[list[str]]:
    """Split chronologically ordered ids into runs of consecutive messages (merged clusters);
    ``links`` holds the pairs (a, b) known to be consecutive (a NEXT b)."""
    runs: list[list[str]] = []
    for id_ in ordered_ids:
        if runs and (runs[-1][-1], id_) in links:
            runs[-1].append(id_)
        else:
            runs.append([id_])
    return runs
