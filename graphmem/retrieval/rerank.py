"""Learned re-ranking of fused candidates: a logistic model over what the recall lists say of
each candidate (its rank and score in every list, its fused score and place) and a few things
its text says (a time word or a number, for a "when" question; its speaker named by the
question; its length; the question's words it shares). The model's probability of being
evidence becomes the candidate's score, which expansion then spreads to its neighbours with
the ranker's own decay (`Ranker.decay`). Pure: the weights are data (`Ranker`, read from
``rankers/<embedding>/<name>.json``), trained by ``graphmem bench ranker`` under one embedding
model and unit (their scores and ranks differ under another)."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

from graphmem.retrieval.fusion import Fused
from graphmem.retrieval.recipes import DEFAULT_EMBEDDING
from graphmem.retrieval.retrievers import Candidate

log = logging.getLogger(__name__)

_TIME_WORDS = frozenset({
    "yesterday", "today", "tomorrow", "tonight", "last", "next", "ago", "week", "weekend",
    "month", "year", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
})
_WORD = re.compile(r"\w+")
ABSENT_RANK = 200
"""The rank a candidate missing from a list is given (beyond every list's depth)."""
REACH = 2
"""A ranker re-ranks at least this many candidates per nucleus wanted (`Ranker.reach`): on
LoCoMo dev (held-out conversation) re-ranking twice the budget, not the budget, lifted recall at
50 messages from 0.908 to 0.917 (``rrf_windows``) and 0.884 to 0.890 (``rrf_expand``, and at 20
messages 0.809 to 0.814); three times gained nothing more."""
PER_LIST = ("rrf", "score", "found", "log_rank")
"""The features of one recall list, in order: 1/(60 + rank), the score over the list's best
score, 1 when the list found it, log(1 + rank)."""
CANDIDATE = ("fused_score", "log_position", "session", "time", "when", "when_time", "has_time",
             "speaker_named", "log_length", "overlap")
"""The features of the candidate itself, after the lists' (see `features`)."""


def feature_names(lists: Sequence[str]) -> tuple[str, ...]:
    return (*(f"{n}.{f}" for n in lists for f in PER_LIST), *CANDIDATE)


def asks_when(query: str) -> bool:
    q = query.lower()
    return q.startswith("when") or "what date" in q or "how long" in q


def features(query: str, fused: Sequence[Fused], lists: Mapping[str, Sequence[Candidate]],
             records: Mapping[str, Mapping[str, Any]], names: Sequence[str]) -> list[list[float]]:
    """One row per fused candidate, in order (`feature_names` of ``names``, the recall lists).
    A window list credits each turn it covers with the best window's rank and score. ``records``:
    the candidates' messages (``text``, ``speaker``); a missing one counts as empty."""
    words = set(_WORD.findall(query.lower()))
    when = 1.0 if asks_when(query) else 0.0
    wanted = {f.id for f in fused}
    per: dict[str, dict[str, tuple[int, float]]] = {}
    for name in names:
        found = lists.get(name, ())
        top = max((c.score for c in found), default=1.0) or 1.0
        best: dict[str, tuple[int, float]] = {}
        for c in found:
            for id_ in c.covers or (c.id,):
                if id_ in wanted and id_ not in best:
                    best[id_] = (c.rank, c.score / top)
        per[name] = best
    first = fused[0].score if fused and fused[0].score else 1.0
    rows = []
    for position, f in enumerate(fused):
        row: list[float] = []
        for name in names:
            hit = per[name].get(f.id)
            if hit is None:
                row += [0.0, 0.0, 0.0, math.log1p(ABSENT_RANK)]
            else:
                rank, score = hit
                row += [1.0 / (60 + rank), score, 1.0, math.log1p(rank)]
        record = records.get(f.id, {})
        text = str(record.get("text") or "")
        speaker = str(record.get("speaker") or "").lower().split()
        tokens = set(_WORD.findall(text.lower()))
        timed = 0.0 if _TIME_WORDS.isdisjoint(tokens) and not any(
            t.isdigit() for t in tokens) else 1.0
        shared = words & tokens
        row += [f.score / first, math.log1p(position), float("session" in f.rules),
                float("time" in f.rules), when, when * timed, timed,
                1.0 if speaker and speaker[0] in words else 0.0,
                math.log1p(len(text.split())), len(shared) / max(1, len(words))]
        rows.append(row)
    return rows


def folded(mean: Sequence[float], scale: Sequence[float], coef: Sequence[float],
           intercept: float) -> tuple[tuple[float, ...], float]:
    """A standardised logistic model's weights on the raw features, and its intercept with the
    standardisation folded in: w / s per feature, intercept - sum(w * m / s) (the message and
    the chunk rankers)."""
    weights = tuple(w / s for w, s in zip(coef, scale, strict=True))
    return weights, intercept - math.fsum(w * m for w, m in zip(weights, mean, strict=True))


def logistic(z: float) -> float:
    """1 / (1 + e^-z), with z clipped to [-60, 60]."""
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True)
class Ranker:
    """A trained logistic model for one set of recall lists."""

    lists: tuple[str, ...]
    """The recall lists (in plan order) the model was trained on; it re-ranks only those."""
    depth: int
    """How many fused candidates it re-ranks (at least the message budget)."""
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    about: str = ""
    """How it was trained, and what it scored."""
    embedder: str = DEFAULT_EMBEDDING
    """The embedding model and unit whose vector scores it was trained on (``<embedder>/<unit>``,
    as `embedder_key` writes them): the lists' scores and ranks differ under another model."""
    decay: float | None = None
    """The neighbour decay expansion spreads its probabilities with (they are not fused scores:
    `graphmem bench ranker` picks it by held-out recall); None: the preset's."""

    def __post_init__(self) -> None:
        n = len(feature_names(self.lists))
        if not len(self.mean) == len(self.scale) == len(self.coef) == n:
            raise ValueError(f"a ranker over {self.lists} needs {n} weights")

    def decay_or(self, default: float) -> float:
        """The decay expansion spreads this ranker's probabilities with: its own, else
        ``default`` (the preset's)."""
        return self.decay if self.decay is not None else default

    def reach(self, heads: int) -> int:
        """How many fused candidates it re-ranks when ``heads`` become nuclei with windows: its
        depth, or `REACH` times the heads for a larger budget."""
        return max(self.depth, REACH * heads)

    def probability(self, row: Sequence[float]) -> float:
        """The logistic of the weighted sum of the standardised features."""
        weights, offset = self._raw
        return logistic(offset + sum(w * x for w, x in zip(weights, row, strict=True)))

    @cached_property
    def _raw(self) -> tuple[tuple[float, ...], float]:
        return folded(self.mean, self.scale, self.coef, self.intercept)

    def to_json(self) -> dict[str, Any]:
        return {"lists": list(self.lists), "features": list(feature_names(self.lists)),
                "depth": self.depth, "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "about": self.about,
                "embedder": self.embedder, "decay": self.decay}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Ranker:
        lists = tuple(data["lists"])
        if list(data.get("features", feature_names(lists))) != list(feature_names(lists)):
            raise ValueError("the ranker's features are not the ones this version computes")
        return cls(lists, int(data["depth"]), tuple(map(float, data["mean"])),
                   tuple(map(float, data["scale"])), tuple(map(float, data["coef"])),
                   float(data["intercept"]), str(data.get("about", "")),
                   str(data.get("embedder", DEFAULT_EMBEDDING)),
                   None if data.get("decay") is None else float(data["decay"]))


def rerank(ranker: Ranker, query: str, fused: Sequence[Fused],
           lists: Mapping[str, Sequence[Candidate]],
           records: Mapping[str, Mapping[str, Any]], depth: int) -> list[Fused]:
    """The first ``depth`` candidates re-scored by ``ranker`` (their probability of being
    evidence) and sorted by it (ties keep the fused order); the rest follow in fused order, each
    scored half the lowest probability, so expansion still ranks them last."""
    head, tail = list(fused[:depth]), list(fused[depth:])
    if not head:
        return []
    rows = features(query, head, lists, records, ranker.lists)
    scored = sorted(((ranker.probability(r), n, f) for n, (r, f) in enumerate(zip(rows, head,
                                                                                 strict=True))),
                    key=lambda t: (-t[0], t[1]))
    low = scored[-1][0] / 2
    return ([Fused(f.id, p, f.rules, f.best_rank) for p, _, f in scored]
            + [Fused(f.id, low, f.rules, f.best_rank) for f in tail])


@cache
def files() -> dict[tuple[str, str], Ranker]:
    """The shipped rankers (every ``rankers/<embedding>/<name>.json``) by the embedding they were
    trained under (`embedder_key`) and their name, which recipes give (`Rerank.ranker`): per
    embedding, one per one-shot method and shape (``rrf_expand``, ``graph``, ``rrf_windows``,
    ``rrf_windows_graph``), each with a twin ``<name>_sparse`` trained with the learned-sparse
    list (a server with ``GRAPHMEM_SPARSE``). Each file names its lists and embedding."""
    root = resources.files("graphmem.retrieval").joinpath("rankers")
    out = {}
    for folder in sorted(root.iterdir(), key=lambda e: e.name):
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                ranker = Ranker.from_json(json.loads(entry.read_text(encoding="utf-8")))
                out[ranker.embedder, entry.name.removesuffix(".json")] = ranker
    return out


@cache
def shipped() -> dict[tuple[str, tuple[str, ...]], Ranker]:
    """The shipped rankers (`files`) by their embedding and the recall lists they re-rank."""
    return {(r.embedder, r.lists): r for r in files().values()}


def file_name(ranker: str, lists: Sequence[str]) -> str:
    """The file a recipe's ranker is read from for these lists: ``<ranker>``, or its twin
    ``<ranker>_sparse`` when the learned-sparse list runs."""
    return f"{ranker}_sparse" if "sparse" in lists else ranker


_warned: set[tuple[str, str, tuple[str, ...]]] = set()


def named(ranker: str, lists: Sequence[str],
          embedding: str = DEFAULT_EMBEDDING) -> tuple[Ranker | None, str | None]:
    """The shipped ranker a recipe names, for a plan's recall lists (`plan.reranked_lists`):
    ``(ranker, None)``; or, when none of that name is shipped under ``embedding`` or it was
    trained on other lists, ``(None, why)``: the search keeps the fused order, and says so
    once in the log (a warning)."""
    name = file_name(ranker, lists)
    found = files().get((embedding, name))
    if found is not None and found.lists == tuple(lists):
        return found, None
    why = (f"ranker {name!r} is not shipped under embedding {embedding!r}" if found is None
           else f"ranker {name!r} was trained on lists {list(found.lists)}, not {list(lists)}")
    key = (embedding, name, tuple(lists))
    if key not in _warned:
        _warned.add(key)
        log.warning("no learned re-ranking, the fused order stands: %s", why)
    return None, why


def embedder_key(embedder: str, unit: str) -> str:
    """How a ranker names the embedding it was trained under, e.g. ``minilm/sentence``."""
    return f"{embedder}/{unit}"


def serves(embedding: str) -> bool:
    """Whether rankers were shipped for this embedding (`embedder_key`); under another one the
    search keeps the fused order."""
    return any(e == embedding for e, _ in shipped())


def for_lists(lists: Sequence[str], embedding: str = DEFAULT_EMBEDDING) -> Ranker | None:
    """The shipped ranker of exactly these recall lists under ``embedding``, if there is one."""
    return shipped().get((embedding, tuple(lists)))
