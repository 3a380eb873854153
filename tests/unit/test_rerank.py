"""Unit tests of graphmem.retrieval.rerank: the features, the model, the re-ranking, the shipped
rankers and where the plan uses them. Pure: no database."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.models import Method, SearchRequest
from graphmem.retrieval import recipe
from graphmem.retrieval.fusion import Fused
from graphmem.retrieval.plan import reranked_lists, resolve
from graphmem.retrieval.rerank import (
    ABSENT_RANK,
    CANDIDATE,
    PER_LIST,
    REACH,
    Ranker,
    embedder_key,
    feature_names,
    features,
    for_lists,
    rerank,
    serves,
    shipped,
)
from graphmem.retrieval.retrievers import Candidate

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)
LISTS = ("vector", "fulltext")


def fused(*ids: str) -> list[Fused]:
    return [Fused(i, 1.0 / (60 + n), ("vector",), n) for n, i in enumerate(ids, start=1)]


def ranker(coef: dict[str, float], lists: tuple[str, ...] = LISTS, depth: int = 3) -> Ranker:
    names = feature_names(lists)
    return Ranker(lists, depth, (0.0,) * len(names), (1.0,) * len(names),
                  tuple(coef.get(n, 0.0) for n in names), 0.0)


def column(name: str, lists: tuple[str, ...] = LISTS) -> int:
    return feature_names(lists).index(name)


def test_a_row_has_the_lists_features_then_the_candidates() -> None:
    rows = features("q", fused("a"), {}, {}, LISTS)
    assert len(rows[0]) == len(feature_names(LISTS)) == len(LISTS) * len(PER_LIST) + len(CANDIDATE)


def test_a_list_gives_rank_score_and_found_and_an_absent_list_the_far_rank() -> None:
    lists = {"vector": [Candidate("x", "vector", 1, 0.8), Candidate("a", "vector", 2, 0.4)]}
    row = features("q", fused("a"), lists, {}, LISTS)[0]
    assert row[column("vector.rrf")] == pytest.approx(1 / 62)
    assert row[column("vector.score")] == pytest.approx(0.5)  # over the list's best score
    assert row[column("vector.found")] == 1.0
    assert row[column("vector.log_rank")] == pytest.approx(math.log1p(2))
    assert row[column("fulltext.found")] == 0.0
    assert row[column("fulltext.log_rank")] == pytest.approx(math.log1p(ABSENT_RANK))


def test_a_window_credits_each_turn_it_covers_with_its_best_rank() -> None:
    lists = ("window3_vector",)
    found = {"window3_vector": [Candidate("w1", "window3_vector", 1, 0.9, ("a", "b", "c")),
                                Candidate("w2", "window3_vector", 2, 0.6, ("c", "d", "e"))]}
    rows = features("q", fused("c", "d"), found, {}, lists)
    assert rows[0][column("window3_vector.rrf", lists)] == pytest.approx(1 / 61)
    assert rows[1][column("window3_vector.rrf", lists)] == pytest.approx(1 / 62)


def test_the_text_features() -> None:
    records = {"a": {"text": "We went hiking last week with Mel", "speaker": "Caroline Smith"},
               "b": {"text": "ok", "speaker": "Melanie"}}
    rows = features("When did Caroline go hiking?", fused("a", "b"), {}, records, LISTS)
    a, b = ({n: r[column(n)] for n in CANDIDATE} for r in rows)
    assert a["when"] == b["when"] == 1.0
    assert (a["has_time"], a["when_time"], b["has_time"]) == (1.0, 1.0, 0.0)
    assert (a["speaker_named"], b["speaker_named"]) == (1.0, 0.0)
    assert a["overlap"] == pytest.approx(1 / 5)  # "hiking" of when/did/caroline/go/hiking
    assert a["log_length"] == pytest.approx(math.log1p(7))
    assert (a["fused_score"], a["log_position"]) == (1.0, 0.0)
    assert b["log_position"] == pytest.approx(math.log1p(1))


def test_a_missing_record_counts_as_empty_text() -> None:
    row = features("what?", fused("a"), {}, {}, LISTS)[0]
    assert row[column("log_length")] == 0.0 and row[column("has_time")] == 0.0


def test_rerank_sorts_the_head_by_probability_and_keeps_the_tail_after_it() -> None:
    r = ranker({"speaker_named": 5.0}, depth=3)
    records = {"c": {"text": "hi", "speaker": "Ann"}}
    out = rerank(r, "Did Ann call?", fused("a", "b", "c", "d", "e"), {}, records, 3)
    assert [f.id for f in out] == ["c", "a", "b", "d", "e"]
    assert out[0].score > out[1].score == out[2].score > out[3].score == out[4].score
    assert out[3].score == pytest.approx(out[2].score / 2)
    assert out[0].rules == ("vector",)


@given(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
       st.integers(min_value=1, max_value=12), st.floats(min_value=-3, max_value=3))
def test_rerank_is_a_permutation_with_the_tail_in_fused_order(ids: list[str], depth: int,
                                                              w: float) -> None:
    r = ranker({"log_position": w, "fused_score": -w})
    out = rerank(r, "q", fused(*ids), {}, {}, depth)
    assert sorted(f.id for f in out) == sorted(ids)
    assert [f.id for f in out[depth:]] == ids[depth:]
    head = [f.score for f in out[:depth]]
    assert head == sorted(head, reverse=True)
    assert all(f.score < min(head) for f in out[depth:])


def test_a_ranker_needs_one_weight_per_feature_and_round_trips_as_json() -> None:
    r = ranker({"when": 1.0})
    assert Ranker.from_json(r.to_json()) == r
    with pytest.raises(ValueError, match="needs"):
        Ranker(LISTS, 3, (0.0,), (1.0,), (0.0,), 0.0)
    data: dict[str, Any] = {**r.to_json(), "features": ["other"]}
    with pytest.raises(ValueError, match="features"):
        Ranker.from_json(data)


def test_probability_is_the_logistic_of_the_standardised_sum() -> None:
    names = feature_names(LISTS)
    r = Ranker(LISTS, 3, (1.0,) * len(names), (2.0,) * len(names),
               (0.5,) + (0.0,) * (len(names) - 1), -1.0)
    row = [5.0] + [0.0] * (len(names) - 1)
    assert r.probability(row) == pytest.approx(1 / (1 + math.exp(-(-1.0 + 0.5 * 2.0))))


WINDOWS = ("vector", "fulltext", "window3_vector", "window3_fulltext", "window5_vector",
           "window5_fulltext")


def test_the_shipped_rankers_serve_the_expanding_methods_with_the_graph_or_sparse() -> None:
    sets = {("vector", "fulltext"), WINDOWS, ("vector", "fulltext", "graph"), (*WINDOWS, "graph")}
    sparse = {(*s[:2], "sparse", *s[2:]) for s in sets}
    for embedding in {e for e, _ in shipped()}:
        assert {lists for e, lists in shipped() if e == embedding} == sets | sparse
    for (embedding, lists), r in shipped().items():
        assert r.depth >= 10 and r.about and (r.embedder, r.lists) == (embedding, lists)
        assert r.decay is not None and 0.0 <= r.decay < 1.0  # chosen by bench ranker


@pytest.mark.parametrize("method", ["rrf_expand", "rrf_windows", "iterative"])
def test_the_plan_re_ranks_the_expanding_methods(method: Method) -> None:
    plan = resolve(SearchRequest(query="q", owner="o", method=method), recipe(method), T0)
    lists = plan.lists if method != "iterative" else ("vector", "fulltext")
    assert plan.ranker is not None and plan.ranker is for_lists(lists)


@pytest.mark.parametrize("method", ["rrf", "vector", "fulltext"])
def test_no_ranker_without_expansion(method: Method) -> None:
    plan = resolve(SearchRequest(query="q", owner="o", method=method), recipe(method), T0)
    assert plan.ranker is None


@pytest.mark.parametrize(("method", "lists"), [("graph", ("vector", "fulltext", "graph")),
                                               ("rrf_expand", ("vector", "fulltext", "graph")),
                                               ("rrf_windows", (*WINDOWS, "graph"))])
def test_with_the_graph_list_the_ranker_of_the_lists_and_the_graph(method: Method,
                                                                  lists: tuple[str, ...]) -> None:
    rs = recipe(method).with_(graph_list=method != "graph")
    plan = resolve(SearchRequest(query="q", owner="o", method=method), rs, T0)
    assert plan.ranker is not None and plan.ranker is for_lists(lists)
    assert reranked_lists(plan.lists, plan.graph) == lists


@pytest.mark.parametrize("graph_list", [False, True])
@pytest.mark.parametrize("method", ["rrf_expand", "rrf_windows"])
def test_with_the_sparse_list_the_ranker_trained_with_it(method: Method, graph_list: bool) -> None:
    rs = recipe(method).with_(sparse=True, graph_list=graph_list)
    plan = resolve(SearchRequest(query="q", owner="o", method=method), rs, T0)
    assert "sparse" in plan.lists and plan.ranker is not None
    assert plan.ranker.lists == reranked_lists(plan.lists, plan.graph)


def test_no_ranker_when_off_or_for_lists_it_was_not_trained_on() -> None:
    req = SearchRequest(query="q", owner="o", method="rrf_expand")
    assert resolve(req, recipe("rrf_expand").with_(rerank=False), T0).ranker is None
    assert resolve(req, recipe("rrf_expand").with_(rerank=False, graph_list=True),
                   T0).ranker is None
    assert for_lists(("vector", "fulltext", "bm25")) is None


def test_the_shipped_rankers_name_the_embedding_they_were_trained_under() -> None:
    assert serves(embedder_key("minilm", "sentence"))
    assert not serves(embedder_key("bge-small-en-v1.5", "sentence"))


def test_the_plan_takes_the_ranker_of_its_embedding() -> None:
    req = SearchRequest(query="q", owner="o", method="rrf_windows")
    for embedding in {e for e, _ in shipped()}:
        plan = resolve(req, recipe("rrf_windows").with_(embedding=embedding), T0)
        assert plan.ranker is not None and plan.ranker.embedder == embedding
        assert plan.ranker is for_lists(plan.lists, embedding)
    other = recipe("rrf_windows").with_(embedding=embedder_key("bge-small-en-v1.5", "sentence"))
    assert resolve(req, other, T0).ranker is None


def test_a_ranker_re_ranks_its_depth_or_twice_the_budget() -> None:
    names = feature_names(LISTS)
    r = Ranker(LISTS, 20, (0.0,) * len(names), (1.0,) * len(names), (0.0,) * len(names), 0.0)
    assert r.reach(5) == 20 and r.reach(10) == 20
    assert r.reach(50) == REACH * 50 == 100


def test_the_plan_spreads_with_the_ranker_s_decay_else_the_preset_s() -> None:
    req = SearchRequest(query="q", owner="o", method="rrf_windows", max_messages=10)
    rs = recipe("rrf_windows").with_(neighbour_decay=0.3)
    plan = resolve(req, rs, T0)
    assert plan.ranker is not None
    assert plan.decay == (plan.ranker.decay if plan.ranker.decay is not None else 0.3)
    assert resolve(req, rs.with_(rerank=False), T0).decay == 0.3
    assert resolve(req.model_copy(update={"method": "rrf"}), rs.for_method("rrf"), T0).decay == 0.3


def test_a_ranker_s_decay_round_trips_and_is_optional() -> None:
    names = feature_names(LISTS)
    r = Ranker(LISTS, 10, (0.0,) * len(names), (1.0,) * len(names), (0.0,) * len(names), 0.0,
               decay=0.05)
    assert Ranker.from_json(r.to_json()) == r
    data = r.to_json()
    del data["decay"]
    assert Ranker.from_json(data).decay is None
