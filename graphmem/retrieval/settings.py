"""Retrieval settings as a value object, with named presets."""

from __future__ import annotations

from dataclasses import dataclass, replace

from graphmem.errors import InvalidInput


@dataclass(frozen=True)
class RetrievalSettings:
    """How one search runs. Immutable: derive variants with :meth:`with_`."""

    rrf_k: int = 60
    """The constant of reciprocal rank fusion: score = sum over lists of 1/(rrf_k + rank)."""
    candidates: int = 50
    """How many hits each recall list (vector, fulltext) contributes before fusion."""
    overfetch: int = 8
    """ANN/fulltext results fetched per wanted hit, before the tenant/owner filter drops others'."""
    expand_before: int = 1
    expand_after: int = 2
    neighbour_decay: float = 0.35
    """A neighbour at distance d earns nucleus score x decay^d (chosen on the LoCoMo dev set)."""
    normalise_time: bool = True
    """Show relative time expressions resolved in the context: "yesterday [2023-05-07]"."""
    max_messages: int | None = None
    """Budget of messages returned after expansion; None: every nucleus with its window."""
    window_sizes: tuple[int, ...] = (3, 5)
    """Method ``rrf_windows``: the sizes of turn windows searched (each a recall list per index;
    windows of 3 and 5 turns are built by formation)."""
    window_indexes: tuple[str, ...] = ("vector", "fulltext")
    """Method ``rrf_windows``: the indexes searched for each window size."""
    window_split: bool = True
    """Method ``rrf_windows``: a window's vote is shared by the turns it covers, each window list
    weighing 1/size in the fusion (the turn lists weigh 1); False: every window list weighs 1."""
    window_matched_only: bool = False
    """Method ``rrf_windows``: a window credits only its turns that the turn lists found too (it
    re-ranks them and adds no turn of its own)."""
    session_prior: bool = False
    """Method ``rrf_windows``: add the session prior list (candidates ranked by their session;
    off by default: with split windows it lowered recall on LoCoMo dev)."""
    session_depth: int = 1
    """A session scores the sum of the fused scores of its ``session_depth`` best candidates."""

    def with_(self, **changes: object) -> RetrievalSettings:
        return replace(self, **changes)  # type: ignore[arg-type]


PRESETS: dict[str, RetrievalSettings] = {
    "default": RetrievalSettings(),
    "fast": RetrievalSettings(candidates=20, overfetch=4, expand_before=0, expand_after=1),
    "wide": RetrievalSettings(candidates=100, overfetch=10, expand_before=2, expand_after=3),
}


def preset(name: str) -> RetrievalSettings:
    try:
        return PRESETS[name]
    except KeyError:
        raise InvalidInput("preset", f"unknown preset {name!r}; known: {sorted(PRESETS)}") from None
