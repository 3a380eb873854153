"""Unit tests of graphmem.bench.iterative_cv and `ranker.fold_rankers` on hand-made data (no
database): each held-out conversation gets a ranker fitted without it, its decay chosen within
the others; the held-out questions are searched with their fold's ranker and pooled."""

from __future__ import annotations

from dataclasses import replace

import pytest

from graphmem.bench import ranker as fitting
from graphmem.bench.iterative_cv import scores, with_ranker
from graphmem.bench.ranker import fold_rankers
from graphmem.bench.units import Probe
from graphmem.models import SearchRequest
from graphmem.retrieval import recipe
from graphmem.retrieval.plan import resolve
from graphmem.retrieval.rerank import Ranker, feature_names
from tests.unit.test_bench_ranker import LISTS, T0, sample


def flat(lists: tuple[str, ...], weight: float = 0.0, decay: float | None = None,
         about: str = "") -> Ranker:
    """A ranker of ``lists`` with every weight ``weight`` (means 0, scales 1)."""
    n = len(feature_names(lists))
    return Ranker(lists, 3, (0.0,) * n, (1.0,) * n, (weight,) * n, 0.0, about, decay=decay)


def test_each_conversation_s_ranker_is_fitted_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    samples = [sample(f"o{n % 3}", n % 3) for n in range(30)]
    trained_on: list[set[str]] = []
    real = fitting.train

    def train(rest, *args, **kwargs):  # type: ignore[no-untyped-def]
        trained_on.append({s.owner for s in rest})
        return real(rest, *args, **kwargs)

    monkeypatch.setattr(fitting, "train", train)
    folds = fold_rankers(samples, LISTS, depth=3, decays=(0.0, 0.35))
    assert set(folds) == {"o0", "o1", "o2"}
    # per fold: two inner models (the decay, within the other two), then the fold's model
    assert trained_on == [{"o2"}, {"o1"}, {"o1", "o2"},
                          {"o2"}, {"o0"}, {"o0", "o2"},
                          {"o1"}, {"o0"}, {"o0", "o1"}]
    assert all(r.decay in (0.0, 0.35) for r in folds.values())
    assert fitting.scores(samples, lambda s: folds[s.owner])["recall"]["5"] == 1.0


def test_one_other_conversation_leaves_the_decay_to_the_preset() -> None:
    samples = [sample(f"o{n % 2}", n % 2) for n in range(20)]
    assert {r.decay for r in fold_rankers(samples, LISTS, depth=3).values()} == {None}


def test_scores_pool_every_question_by_budget_and_category() -> None:
    probes = [Probe("a", "q1", 1, ("D1:1",)), Probe("a", "q2", 2, ("D1:2", "D1:3")),
              Probe("b", "q3", 2, ("D2:1",))]
    models = {o: flat(LISTS, about=o) for o in "ab"}
    seen: list[tuple[str, int, str]] = []

    def run(p: Probe, budget: int, ranker: Ranker | None) -> tuple[list[str], int]:
        assert ranker is not None
        seen.append((p.query, budget, ranker.about))
        found = {"q1": ["x/D1:1"], "q2": ["x/D1:2"], "q3": []}[p.query]
        return found if budget >= 10 else [], 2

    out = scores(probes, run, lambda p: models[p.owner])
    assert {(q, r) for q, _, r in seen} == {("q1", "a"), ("q2", "a"), ("q3", "b")}
    assert out["recall"] == {"5": 0.0, "10": 0.5, "20": 0.5, "50": 0.5}
    assert out["recall_by_category"]["1"]["10"] == 1.0
    assert out["recall_by_category"]["2"]["10"] == 0.25
    assert out["mean_rounds"] == 2.0


def test_a_fold_s_ranker_and_its_decay_replace_the_shipped_one() -> None:
    rs = recipe("rrf_windows").with_(graph_list=True)
    plan = resolve(SearchRequest(query="q", owner="o", method="rrf_windows", max_messages=5),
                   rs, T0)
    assert plan.ranker is not None
    fold = flat(plan.ranker.lists, 1.0, decay=0.2)
    assert with_ranker(plan, fold, 0.35).ranker is fold
    assert with_ranker(plan, fold, 0.35).decay == 0.2
    assert with_ranker(plan, replace(fold, decay=None), 0.35).decay == 0.35
    assert with_ranker(plan, None, 0.35) is plan
    with pytest.raises(ValueError, match="re-ranks"):
        with_ranker(plan, flat(LISTS), 0.35)
