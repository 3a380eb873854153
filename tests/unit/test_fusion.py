"""Unit tests of graphmem.retrieval.fusion.rrf (reciprocal rank fusion). Pure: no database."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.retrieval.fusion import Fused, rrf

ids = st.sampled_from([f"m{i}" for i in range(12)])
ranked_lists = st.dictionaries(
    st.sampled_from(["vector", "fulltext", "other"]), st.lists(ids, max_size=15), max_size=3
)


def by_id(fused: list[Fused]) -> dict[str, Fused]:
    return {f.id: f for f in fused}


def test_first_in_both_lists_scores_two_over_61() -> None:
    fused = rrf({"vector": ["a", "b"], "fulltext": ["a", "c"]}, k=60)
    assert fused[0].id == "a"
    assert fused[0].score == pytest.approx(2 / 61)
    assert fused[0].best_rank == 1


def test_exact_scores_sum_one_over_k_plus_rank() -> None:
    fused = by_id(rrf({"vector": ["a", "b", "c"], "fulltext": ["c", "d"]}, k=60))
    assert fused["a"].score == pytest.approx(1 / 61)
    assert fused["b"].score == pytest.approx(1 / 62)
    assert fused["c"].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused["d"].score == pytest.approx(1 / 62)


def test_k_is_honoured() -> None:
    fused = by_id(rrf({"vector": ["a", "b"]}, k=1))
    assert fused["a"].score == pytest.approx(1 / 2)
    assert fused["b"].score == pytest.approx(1 / 3)


def test_repeated_id_in_one_list_counts_once_at_best_rank() -> None:
    fused = by_id(rrf({"vector": ["a", "b", "a", "a"]}, k=60))
    assert fused["a"].score == pytest.approx(1 / 61)
    assert fused["a"].rules == ("vector",)
    assert fused["b"].score == pytest.approx(1 / 62)


def test_repeat_does_not_shift_later_ranks() -> None:
    # ranks are positions in the list as given: the repeat still occupies rank 2
    fused = by_id(rrf({"vector": ["a", "a", "b"]}, k=60))
    assert fused["b"].score == pytest.approx(1 / 63)
    assert fused["b"].best_rank == 3


def test_rules_name_the_lists_in_list_order() -> None:
    fused = by_id(rrf({"fulltext": ["a", "b"], "vector": ["c", "a"]}))
    assert fused["a"].rules == ("fulltext", "vector")
    assert fused["b"].rules == ("fulltext",)
    assert fused["c"].rules == ("vector",)


def test_best_rank_is_the_best_over_all_lists() -> None:
    fused = by_id(rrf({"vector": ["x", "y", "a"], "fulltext": ["a"]}))
    assert fused["a"].best_rank == 1


def test_ties_broken_by_id() -> None:
    # same rank in the same list position: equal score, equal best rank -> id decides
    fused = rrf({"vector": ["b", "x"], "fulltext": ["a", "y"]})
    assert [f.id for f in fused] == ["a", "b", "x", "y"]


def test_equal_ranks_in_swapped_lists_tie_and_id_decides() -> None:
    fused = rrf({"vector": ["z", "a"], "fulltext": ["a", "z"]})
    # both have ranks {1, 2}: equal score, equal best rank -> id order
    assert fused[0].score == fused[1].score
    assert [f.id for f in fused] == ["a", "z"]


def test_ties_broken_by_best_rank_before_id() -> None:
    # k=1: "a" at ranks 2 and 5 scores 1/3 + 1/6 == 1/2, exactly the score of "z" at rank 1.
    fused = rrf({"vector": ["z", "a"], "fulltext": ["f1", "f2", "f3", "f4", "a"]}, k=1)
    top = [f for f in fused if f.id in ("a", "z")]
    assert top[0].score == top[1].score == 0.5
    assert [f.id for f in top] == ["z", "a"]  # best rank 1 beats best rank 2, despite the id


def test_deterministic_regardless_of_list_order() -> None:
    one = rrf({"vector": ["a", "b", "c"], "fulltext": ["c", "b", "d"]})
    two = rrf({"fulltext": ["c", "b", "d"], "vector": ["a", "b", "c"]})
    assert [(f.id, f.score) for f in one] == [(f.id, f.score) for f in two]


@pytest.mark.parametrize("ranked", [{}, {"vector": []}, {"vector": [], "fulltext": []}])
def test_empty_input_gives_empty_output(ranked: dict[str, list[str]]) -> None:
    assert rrf(ranked) == []


def test_three_lists_same_ranks_tie_broken_by_id() -> None:
    fill = [f"f{i}" for i in range(7)]
    ranked = {
        "x": ["a", "b"],  # a:1 b:2
        "y": ["b", *fill[1:6], "a"],  # b:1 a:7
        "z": ["f0", "a", *fill[2:6], "b"],  # a:2 b:7
    }
    fused = [f for f in rrf(ranked) if f.id in ("a", "b")]
    # both ids have ranks {1, 2, 7}: the same score, the same best rank -> "a" first
    assert fused[0].score == fused[1].score
    assert [f.id for f in fused] == ["a", "b"]


@given(ranked_lists)
def test_property_output_is_union_sorted_by_score(ranked: dict[str, list[str]]) -> None:
    fused = rrf(ranked)
    out_ids = [f.id for f in fused]
    assert len(out_ids) == len(set(out_ids))
    assert set(out_ids) == {i for lst in ranked.values() for i in lst}
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    keys = [(-f.score, f.best_rank, f.id) for f in fused]
    assert keys == sorted(keys)


@given(ranked_lists)
def test_property_score_matches_definition(ranked: dict[str, list[str]]) -> None:
    k = 60
    for f in rrf(ranked, k):
        expected = [1 / (k + lst.index(f.id) + 1) for lst in ranked.values() if f.id in lst]
        assert math.isclose(f.score, math.fsum(expected), rel_tol=1e-12)
        assert f.rules == tuple(rule for rule, lst in ranked.items() if f.id in lst)
        assert f.best_rank == min(lst.index(f.id) + 1 for lst in ranked.values() if f.id in lst)


# --- explicit ranks, crediting covering units, the session prior --------------------------------

def test_fuse_with_enumerated_ranks_is_rrf() -> None:
    from graphmem.retrieval.fusion import enumerate_ranks, fuse

    lists = {"vector": ["a", "b", "c", "a"], "fulltext": ["c", "d"]}
    assert fuse({k: list(enumerate_ranks(v)) for k, v in lists.items()}) == rrf(lists)


def test_fuse_allows_tied_ranks() -> None:
    from graphmem.retrieval.fusion import fuse

    fused = fuse({"w": [("a", 1), ("b", 1), ("c", 2)]}, k=60)
    assert [f.id for f in fused] == ["a", "b", "c"]
    assert fused[0].score == fused[1].score == 1 / 61
    assert fused[2].score == 1 / 62


def test_credit_gives_each_message_its_best_covering_unit_rank() -> None:
    from graphmem.retrieval.fusion import credit

    units = [("m2", "m3", "m4"), ("m3", "m4", "m5"), ("m9",)]
    assert credit(units) == [("m2", 1), ("m3", 1), ("m4", 1), ("m5", 2), ("m9", 3)]
    assert credit([]) == []


def test_session_prior_ranks_candidates_by_their_sessions_best() -> None:
    from graphmem.retrieval.fusion import Fused, session_prior

    fused = [Fused("a1", 0.05, ("vector",), 1), Fused("b1", 0.04, ("vector",), 2),
             Fused("b2", 0.03, ("vector",), 3), Fused("a2", 0.001, ("vector",), 9),
             Fused("x", 0.02, ("vector",), 4)]
    sessions = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    assert session_prior(fused, sessions) == [("a1", 1), ("a2", 1), ("b1", 2), ("b2", 2)]
    # with depth 2, B (0.04 + 0.03) outranks A (0.05 + 0.001)
    assert session_prior(fused, sessions, depth=2) == [
        ("b1", 1), ("b2", 1), ("a1", 2), ("a2", 2)]


def test_credit_with_only_credits_just_those_messages() -> None:
    from graphmem.retrieval.fusion import credit

    units = [("m2", "m3", "m4"), ("m3", "m4", "m5"), ("m9",)]
    assert credit(units, only={"m4", "m5"}) == [("m4", 1), ("m5", 2)]
    assert credit(units, only=set()) == []


def test_fuse_weighs_each_list() -> None:
    from graphmem.retrieval.fusion import fuse

    lists = {"a": [("x", 1), ("y", 2)], "w": [("y", 1)]}
    fused = fuse(lists, k=60, weights={"w": 0.01})
    assert [f.id for f in fused] == ["x", "y"]
    assert fused[0].score == 1 / 61
    assert math.isclose(fused[1].score, 1 / 62 + 0.01 / 61)
    assert fuse(lists, 60, {}) == fuse(lists, 60)  # every list weighs 1 by default
    assert [f.id for f in fuse(lists, 60)] == ["y", "x"]


def test_window_lists_weigh_one_over_their_size_when_split() -> None:
    from graphmem.retrieval.search import weights

    names = ["vector", "fulltext", "window3_vector", "window5_fulltext"]
    assert weights(names, split=True) == {"window3_vector": 1 / 3, "window5_fulltext": 1 / 5}
    assert weights(names, split=False) == {}


def test_ranked_credits_windows_to_their_turns_or_only_the_found_ones() -> None:
    from graphmem.retrieval.retrievers import Candidate
    from graphmem.retrieval.search import ranked

    lists = {"vector": [Candidate("m3", "vector", 1, 0.9)],
             "window3_vector": [Candidate("w1", "window3_vector", 1, 0.8, ("m2", "m3", "m4")),
                                Candidate("w2", "window3_vector", 2, 0.7, ("m7", "m8", "m9"))]}
    assert ranked(lists) == {"vector": [("m3", 1)], "window3_vector": [
        ("m2", 1), ("m3", 1), ("m4", 1), ("m7", 2), ("m8", 2), ("m9", 2)]}
    assert ranked(lists, matched_only=True)["window3_vector"] == [("m3", 1)]
