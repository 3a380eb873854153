"""Neighbour expansion and budgeted selection: pure, no database.

A nucleus is a fused hit. Its window is the chronological list of message ids around it in its
session (``before`` earlier, the nucleus, ``after`` later), as the store reads them along ``NEXT``.
Selection walks the nuclei in fused order and takes each window, nearest neighbours first, until
the message budget is spent. Windows that overlap or touch merge into one cluster later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphmem.retrieval.fusion import Fused


@dataclass(frozen=True)
class Selected:
    id: str
    score: float
    """Score of the best nucleus that brought this message in."""
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
) -> list[Selected]:
    """Choose messages: every nucleus in order with its window, until ``budget`` messages.

    A message that is a neighbour of an earlier nucleus and a nucleus itself keeps both rules.
    """
    nucleus_rules = {n.id: n.rules for n in nuclei}
    chosen: dict[str, Selected] = {}
    for n in nuclei:
        if budget is not None and len(chosen) >= budget:
            break
        for id_ in proximity_order(windows.get(n.id, [n.id]), n.id):
            if budget is not None and len(chosen) >= budget:
                break
            if id_ in chosen:
                continue
            rules = nucleus_rules.get(id_, ())
            if id_ != n.id:
                rules = (*rules, "neighbour")
            chosen[id_] = Selected(id_, n.score, rules, id_ in nucleus_rules)
    return list(chosen.values())


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
