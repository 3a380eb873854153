"""Unit tests of graphmem.bench.ranker: the logistic fit, training, recall through expansion and
cross-validation on synthetic samples (no database), and the search's use of a ranker."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from graphmem.bench.ranker import (
    Sample,
    best_decay,
    cross_validate,
    fit,
    recall,
    scores,
    train,
)
from graphmem.models import SearchRequest
from graphmem.retrieval import recipe
from graphmem.retrieval.fusion import Fused
from graphmem.retrieval.plan import resolve
from graphmem.retrieval.rerank import Ranker, feature_names, features
from graphmem.retrieval.retrievers import Candidate
from graphmem.retrieval.search import SHARED_READ, select_messages
from graphmem.store.tenant import Windows

LISTS = ("vector", "fulltext")
T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)


def test_fit_finds_the_informative_feature() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 3))
    y = (x[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(np.int_)
    mean, scale, coef, _ = fit(x, y)
    assert coef[1] > 1.0 and abs(coef[0]) < 0.5 and abs(coef[2]) < 0.5
    assert mean.shape == scale.shape == (3,)


def test_fit_leaves_a_constant_feature_at_zero_weight() -> None:
    x = np.column_stack([np.ones(50), np.arange(50.0)])
    y = (np.arange(50) > 25).astype(np.int_)
    _, scale, coef, _ = fit(x, y)
    assert scale[0] == 1.0 and coef[0] == 0.0


IDS = ("x/D1:1", "x/D1:2", "x/D1:3")


def sample(owner: str, evidence: int, query: str = "When did Ann call?") -> Sample:
    """Three candidates fused in order; the evidence (its index) is the one whose text has a
    time."""
    fused = [Fused(i, 1.0 / (60 + n), ("vector",), n) for n, i in enumerate(IDS, start=1)]
    records = {i: {"text": "she called yesterday" if n == evidence else "hello there",
                   "speaker": "Bob"} for n, i in enumerate(IDS)}
    lists: dict[str, Any] = {"vector": [Candidate(i, "vector", n, 0.5) for n, i in
                                        enumerate(IDS, start=1)]}
    return Sample(owner, 2, (IDS[evidence].split("/")[1],), query, fused,
                  features(query, fused, lists, records, LISTS),
                  [int(n == evidence) for n in range(3)], {i: [i] for i in IDS}, 0.35, lists,
                  records)


def test_training_learns_what_the_evidence_has_and_re_ranking_finds_it() -> None:
    samples = [sample(f"o{n % 3}", n % 3) for n in range(30)]
    ranker = train(samples, LISTS, depth=3, about="test")
    assert ranker.coef[feature_names(LISTS).index("has_time")] > 0
    assert recall(samples[2], None, 1) == 0.0  # fused: the first, the evidence is the third
    assert recall(samples[2], ranker, 1) == 1.0
    assert scores(samples, lambda s: ranker)["recall"]["5"] == 1.0
    assert cross_validate(samples, LISTS, depth=3)[None]["recall"]["5"] == 1.0


def test_expansion_after_re_ranking_uses_the_ranker_s_decay() -> None:
    """The neighbour of the candidate re-ranked first (no candidate itself) outranks the next
    candidate under a high decay, not under none."""
    ranker = train([sample(f"o{n % 3}", n % 3) for n in range(30)], LISTS, depth=3)
    s = sample("o", 2)
    windows = {IDS[2]: ["x/D1:9", IDS[2]], IDS[0]: [IDS[0]], IDS[1]: [IDS[1]]}
    s = Sample(**{**s.__dict__, "windows": windows, "gold": ("D1:3", "D1:9")})
    assert recall(s, replace(ranker, decay=0.0), 2) == 0.5
    assert recall(s, replace(ranker, decay=1.0), 2) == 1.0


def test_cross_validation_scores_each_decay_and_keeps_the_best() -> None:
    samples = [sample(f"o{n % 3}", n % 3) for n in range(30)]
    by = cross_validate(samples, LISTS, depth=3, decays=(0.0, 0.35))
    assert set(by) == {0.0, 0.35} and by[0.0]["recall"]["5"] == 1.0
    assert best_decay({0.1: {"recall": {"5": 0.5, "10": 0.7}},
                       0.2: {"recall": {"5": 0.6, "10": 0.7}},
                       0.35: {"recall": {"5": 0.6, "10": 0.7}}}) == 0.2


def test_training_needs_both_kinds_of_candidates() -> None:
    s = sample("o", 0)
    none = Sample(**{**s.__dict__, "labels": [0, 0, 0]})
    with pytest.raises(ValueError, match="evidence"):
        train([none], LISTS)


class FakeStore:
    """Fusion reads nothing for rrf_expand; the message and windows queries record the ids they
    were asked."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.asked: list[str] = []

    @staticmethod
    def _record(i: str) -> dict[str, str]:
        return {"id": i, "text": "on monday" if i == "m7" else "hi", "speaker": "Bob"}

    def get_messages(self, ids: list[str]) -> list[dict[str, str]]:
        self.read = list(ids)
        return [self._record(i) for i in ids]

    def windows(self, ids: list[str], before: int, after: int,
                as_of: datetime | None = None) -> Windows:
        self.asked = list(ids)
        out = Windows()
        for i in ids:
            out.windows[i] = [i]
            out.records[i] = self._record(i)
        return out


@pytest.mark.parametrize("depth", [8, 20])
def test_the_search_re_ranks_its_fused_candidates_before_expansion(depth: int) -> None:
    """The ranker reads the messages of every candidate it re-ranks; the heads it puts first
    bring their windows. A few more candidates than heads: one query reads all their windows
    (`SHARED_READ`); many more: their messages, then the heads' windows."""
    names = feature_names(LISTS)
    r = Ranker(LISTS, depth, (0.0,) * len(names), (1.0,) * len(names),
               tuple(4.0 if n == "has_time" else 0.0 for n in names), 0.0)
    plan = resolve(SearchRequest(query="q", owner="o", method="rrf_expand", max_messages=2),
                   recipe("rrf_expand"), T0)
    plan = type(plan)(**{**plan.__dict__, "ranker": r, "time_hint": "off"})
    lists = {"vector": [Candidate(f"m{n}", "vector", n, 1.0) for n in range(1, 31)],
             "fulltext": []}
    store = FakeStore()
    selected, records, _ = select_messages(store, lists, plan)  # type: ignore[arg-type]
    re_ranked = [f"m{n}" for n in range(1, depth + 1)]  # the ranker's depth, in fused order
    if depth - 2 <= SHARED_READ:
        assert store.read == [] and store.asked == re_ranked
    else:
        assert store.read == re_ranked and store.asked == ["m7", "m1"]
    assert [s.id for s in selected] == ["m7", "m1"]  # the heads it put first
    assert "m7" in records
