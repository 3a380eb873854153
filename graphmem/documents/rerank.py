"""Learned re-ranking of chunk search: a logistic model over what the vector and fulltext lists
say of each fused candidate (rank and score in each) and what its text says of the query (the
query's words it holds, weighted by how rare they are among the candidates; the query's word
pairs; how close together the query's words stand in it; the query's words in its title and
section path; its length and place in its document; how many candidates share its document,
their share of the fused score and the best coverage among them).
The model's probability that the chunk holds the answer's passage becomes its score and its
place. Pure but for `apply`, which reads the candidates' texts through the store.

The weights are data (`ChunkRanker`, read from ``rankers/<embedder>.json`` next to this module),
trained by ``python -m graphmem.bench.chunk_ranker`` on the development halves of the documents
benchmark under one embedder (its vector scores differ under another). Without a file for the
embedder in use, the search keeps the fused order and says why once in the log."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from itertools import pairwise
from typing import Any, Protocol

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from graphmem.documents.ranking import document_of
from graphmem.retrieval.fusion import Fused
from graphmem.retrieval.rerank import folded, logistic

log = logging.getLogger(__name__)

LISTS = ("vector", "fulltext")
"""The recall lists a chunk ranker reads, in order."""
DEPTH = 30
"""Fused candidates re-ranked (at least; the k asked for when larger)."""
RRF_K = 60
ABSENT_RANK = 200
"""The rank a candidate missing from a list is given (beyond every list's depth)."""
WINDOW = 12
"""Words in the window the proximity feature slides over a chunk."""
PER_LIST = ("rrf", "score", "relative", "found", "log_rank")
"""Features of one recall list: 1/(60 + rank), the raw score, the score over the list's best,
1 when the list found it, log(1 + rank)."""
CANDIDATE = ("fused", "log_position", "coverage", "idf_coverage", "idf_gap", "bigrams",
             "proximity", "heading", "numbers", "log_length", "log_ordinal", "document_share",
             "document_first", "document_fused", "document_text")
"""Features of the candidate itself, after the lists': its fused score over the first's, log(1 +
its place); the share of the query's content words it holds, the same weighted by each word's
rarity among the candidates and that share's gap to the best candidate's; the share of the
query's word pairs it holds; the most query words within `WINDOW` words, over the query's; the
share of the query's words in its title and section path; of the query's numbers; log(1 + its
words); log(1 + its ordinal); the share of candidates of its document, log(1 + the place of
its document's first), its document's share of the fused score and its best weighted
coverage. Tried and dropped (no gain under cross-validation): answer-type cues (a time word for
"when", a number for "how many", a name for "who") and a BM25 over the candidates."""
RULE = "rerank"
"""The rule a re-ranked chunk carries (beside the lists that found it)."""

_WORD = re.compile(r"[a-z0-9]+")
_STOP = ENGLISH_STOP_WORDS | {"did", "does", "s"}


def feature_names(lists: Sequence[str] = LISTS) -> tuple[str, ...]:
    return (*(f"{n}.{f}" for n in lists for f in PER_LIST), *CANDIDATE)


def stem(word: str) -> str:
    """A light plural and possessive folding (``cells`` and ``cell``, ``viruses`` and ``virus``):
    enough for the text features to meet a query's words in other forms."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "uses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-cased, lightly stemmed word tokens."""
    return [stem(w) for w in _WORD.findall(text.lower())]


def terms(text: str) -> list[str]:
    """The query's content words (stop words out), in order, each once."""
    return list(dict.fromkeys(w for w in words(text) if w not in _STOP))


@dataclass(frozen=True)
class Row:
    """A fused candidate as the ranker reads it."""

    id: str
    fused: float
    text: str
    title: str | None = None
    section: Sequence[str] = ()
    ordinal: int = 0


def _proximity(tokens: Sequence[str], wanted: set[str]) -> float:
    """The most distinct query terms in any `WINDOW` consecutive words, over the query terms."""
    if not wanted:
        return 0.0
    best = 0
    counts: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if t in wanted:
            counts[t] = counts.get(t, 0) + 1
        if i >= WINDOW:
            old = tokens[i - WINDOW]
            if old in counts:
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
        best = max(best, len(counts))
    return best / len(wanted)


def features(query: str, rows: Sequence[Row],
             lists: Mapping[str, Sequence[tuple[str, float]]],
             names: Sequence[str] = LISTS) -> list[list[float]]:
    """One row of `feature_names` per candidate, in order. ``lists``: each recall list's hits
    (id, score), best first; a candidate missing from one is given `ABSENT_RANK`."""
    per: dict[str, dict[str, tuple[int, float, float]]] = {}
    for name in names:
        found = lists.get(name, ())
        top = max((s for _, s in found), default=1.0) or 1.0
        best: dict[str, tuple[int, float, float]] = {}
        for rank, (id_, s) in enumerate(found):
            best.setdefault(id_, (rank, s, s / top))
        per[name] = best
    query_terms = terms(query)
    wanted = set(query_terms)
    pairs = set(pairwise(query_terms))
    numbers = {t for t in wanted if any(ch.isdigit() for ch in t)}
    tokens = [words(r.text) for r in rows]
    sets = [set(t) for t in tokens]
    n = len(rows)
    idf = {t: math.log1p(n / (1 + sum(1 for s in sets if t in s))) for t in wanted}
    total = math.fsum(idf.values()) or 1.0
    covered = [math.fsum(idf[t] for t in wanted & s) / total for s in sets]
    top_cover = max(covered, default=0.0)

    documents: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        documents.setdefault(document_of(r.id), []).append(i)
    first = rows[0].fused if rows and rows[0].fused else 1.0
    all_fused = math.fsum(r.fused for r in rows) or 1.0
    by_document = {d: (math.fsum(rows[i].fused for i in m) / all_fused,
                       max(covered[i] for i in m)) for d, m in documents.items()}
    out = []
    for i, r in enumerate(rows):
        row: list[float] = []
        for name in names:
            hit = per[name].get(r.id)
            if hit is None:
                row += [0.0, 0.0, 0.0, 0.0, math.log1p(ABSENT_RANK)]
            else:
                rank, s, rel = hit
                row += [1.0 / (RRF_K + rank), s, rel, 1.0, math.log1p(rank)]
        have = sets[i]
        bigrams = set(pairwise(tokens[i]))
        heading = set(words(" ".join([r.title or "", *r.section])))
        same = documents[document_of(r.id)]
        row += [r.fused / first, math.log1p(i),
                len(wanted & have) / max(1, len(wanted)), covered[i], top_cover - covered[i],
                len(pairs & bigrams) / len(pairs) if pairs else 0.0,
                _proximity(tokens[i], wanted),
                len(wanted & heading) / max(1, len(wanted)),
                len(numbers & have) / len(numbers) if numbers else 0.0,
                math.log1p(len(tokens[i])), math.log1p(r.ordinal),
                len(same) / max(1, n), math.log1p(same[0]),
                *by_document[document_of(r.id)]]
        out.append(row)
    return out


@dataclass(frozen=True)
class ChunkRanker:
    """A trained logistic model of P(the chunk holds the gold passage | its features)."""

    lists: tuple[str, ...]
    depth: int
    """How many fused candidates it re-ranks (at least)."""
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    about: str = ""
    """How it was trained, and what it scored."""
    embedder: str = "minilm"
    """The embedder whose vector scores it was trained on."""

    def __post_init__(self) -> None:
        n = len(feature_names(self.lists))
        if not len(self.mean) == len(self.scale) == len(self.coef) == n:
            raise ValueError(f"a chunk ranker over {self.lists} needs {n} weights")

    def probability(self, row: Sequence[float]) -> float:
        weights, offset = self._raw
        return logistic(offset + math.fsum(w * x for w, x in zip(weights, row, strict=True)))

    @cached_property
    def _raw(self) -> tuple[tuple[float, ...], float]:
        return folded(self.mean, self.scale, self.coef, self.intercept)

    def to_json(self) -> dict[str, Any]:
        return {"lists": list(self.lists), "features": list(feature_names(self.lists)),
                "depth": self.depth, "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "about": self.about,
                "embedder": self.embedder}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChunkRanker:
        lists = tuple(data["lists"])
        if list(data.get("features", [])) != list(feature_names(lists)):
            raise ValueError("the chunk ranker's features are not the ones this version "
                             "computes")
        return cls(lists, int(data["depth"]), tuple(map(float, data["mean"])),
                   tuple(map(float, data["scale"])), tuple(map(float, data["coef"])),
                   float(data["intercept"]), str(data.get("about", "")),
                   str(data.get("embedder", "minilm")))


def rerank(ranker: ChunkRanker, query: str, fused: Sequence[Fused], rows: Sequence[Row],
           lists: Mapping[str, Sequence[tuple[str, float]]]) -> list[Fused]:
    """The candidates of ``rows`` (the head of ``fused``, in its order) re-scored by ``ranker``
    and sorted by it (ties keep the fused order), each with the rule `RULE`; the rest of
    ``fused`` follows in its order, each scored half the lowest probability."""
    if not rows:
        return list(fused)
    probs = [ranker.probability(x) for x in features(query, rows, lists, ranker.lists)]
    order = sorted(range(len(rows)), key=lambda i: (-probs[i], i))
    by_id = {f.id: f for f in fused}
    head = [Fused(rows[i].id, probs[i], (*by_id[rows[i].id].rules, RULE),
                  by_id[rows[i].id].best_rank) for i in order]
    low = min(probs) / 2
    done = {r.id for r in rows}
    return head + [Fused(f.id, low, f.rules, f.best_rank) for f in fused if f.id not in done]


class ChunkReader(Protocol):
    def chunks(self, ids: list[str], reach: int = 0) -> list[dict[str, Any]]: ...


Read = dict[str, dict[str, Any]]
"""The chunks a re-ranking read, by id (`ChunkReader.chunks` rows, without neighbours)."""


def apply(ranker: ChunkRanker, store: ChunkReader, query: str, fused: Sequence[Fused],
          lists: Mapping[str, Sequence[tuple[str, float]]], k: int,
          ) -> tuple[list[Fused], Read]:
    """Re-rank the first ``max(ranker.depth, k)`` candidates, their texts read from ``store``;
    also the chunks read (the search's k best are among them, so it need not read them
    again)."""
    head = list(fused[:max(ranker.depth, k)])
    found = {r["id"]: r for r in store.chunks([f.id for f in head], 0)}
    rows = [Row(f.id, f.score, str(found[f.id]["text"] or ""), found[f.id].get("title"),
                list(found[f.id].get("section") or []), int(found[f.id].get("ordinal") or 0))
            for f in head if f.id in found]
    return rerank(ranker, query, fused, rows, lists), found


@cache
def shipped() -> dict[str, ChunkRanker]:
    """The shipped chunk rankers (``rankers/<embedder>.json``) by embedder."""
    root = resources.files("graphmem.documents").joinpath("rankers")
    out = {}
    if root.is_dir():
        for entry in sorted(root.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                ranker = ChunkRanker.from_json(json.loads(entry.read_text(encoding="utf-8")))
                out[ranker.embedder] = ranker
    return out


_warned: set[str] = set()


def for_embedder(embedder: str) -> tuple[ChunkRanker | None, str | None]:
    """The shipped chunk ranker for ``embedder``: ``(ranker, None)``, or ``(None, why)`` when
    none is shipped for it (the search keeps the fused order, and says so once in the log)."""
    found = shipped().get(embedder)
    if found is not None:
        return found, None
    why = f"no chunk ranker is shipped for embedder {embedder!r}"
    if embedder not in _warned:
        _warned.add(embedder)
        log.warning("no learned re-ranking of chunks, the fused order stands: %s", why)
    return None, why


def reranked(embedder: str, store: ChunkReader, query: str, fused: Sequence[Fused],
             lists: Mapping[str, Sequence[tuple[str, float]]], k: int,
             ) -> tuple[list[Fused], Read]:
    """The search's re-ranking step: ``fused`` re-ranked by the chunk ranker shipped for
    ``embedder``, with the chunks it read (`apply`), or as it is, nothing read, when none is
    (the reason logged once, `for_embedder`)."""
    ranker, _ = for_embedder(embedder)
    return (list(fused), {}) if ranker is None else apply(ranker, store, query, fused,
                                                            lists, k)
