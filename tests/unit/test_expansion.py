"""Unit tests of graphmem.retrieval.expansion: proximity order, budgeted selection, clusters."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.retrieval.expansion import Selected, clusters, proximity_order, select, select_heads
from graphmem.retrieval.fusion import Fused


def nucleus(id_: str, score: float, *rules: str) -> Fused:
    return Fused(id_, score, tuple(rules) or ("vector",), 1)


def chain(n: int) -> list[str]:
    """m00, m01, ...: ids of one session in NEXT order (zero-padded so they sort in time)."""
    return [f"m{i:02d}" for i in range(n)]


# --- proximity_order ----------------------------------------------------------------------------


def test_proximity_nucleus_first_then_by_distance_later_first() -> None:
    window = ["a", "b", "N", "c", "d"]
    assert proximity_order(window, "N") == ["N", "c", "b", "d", "a"]


def test_proximity_lopsided_window() -> None:
    assert proximity_order(["a", "N", "b", "c", "d"], "N") == ["N", "b", "a", "c", "d"]
    assert proximity_order(["a", "b", "N"], "N") == ["N", "b", "a"]


def test_proximity_nucleus_alone_or_missing_from_window() -> None:
    assert proximity_order(["N"], "N") == ["N"]
    assert proximity_order(["a", "b"], "N") == ["N"]


@given(st.integers(0, 8), st.integers(0, 8))
def test_property_proximity_is_a_permutation_by_distance(before: int, after: int) -> None:
    window = chain(before + 1 + after)
    centre = window[before]
    order = proximity_order(window, centre)
    assert sorted(order) == window
    assert order[0] == centre
    distances = [abs(window.index(i) - before) for i in order]
    assert distances == sorted(distances)


# --- select -------------------------------------------------------------------------------------


def test_select_scores_decay_with_distance() -> None:
    ids = chain(10)
    nuclei = [nucleus("m02", 0.9), nucleus("m07", 0.5, "fulltext")]
    windows = {"m02": ids[1:5], "m07": ids[6:9]}
    chosen = select(nuclei, windows, decay=0.35)
    assert [s.id for s in chosen] == ["m02", "m07", "m03", "m01", "m08", "m06", "m04"]
    by_id = {s.id: s for s in chosen}
    assert by_id["m02"] == Selected("m02", 0.9, ("vector",), True)
    assert by_id["m03"] == Selected("m03", pytest.approx(0.9 * 0.35), ("neighbour",), False)
    assert by_id["m04"].score == pytest.approx(0.9 * 0.35**2)
    assert by_id["m07"] == Selected("m07", 0.5, ("fulltext",), True)
    assert by_id["m06"] == Selected("m06", pytest.approx(0.5 * 0.35), ("neighbour",), False)


def test_select_without_window_takes_the_nucleus_alone() -> None:
    chosen = select([nucleus("a", 0.3)], {})
    assert chosen == [Selected("a", 0.3, ("vector",), True)]


@pytest.mark.parametrize("budget", [0, 1, 2, 3, 4, 5, 6, 7])
def test_select_budget_is_respected_exactly(budget: int) -> None:
    ids = chain(10)
    nuclei = [nucleus("m02", 0.9), nucleus("m07", 0.5)]
    windows = {"m02": ids[1:5], "m07": ids[6:9]}
    unlimited = select(nuclei, windows)
    chosen = select(nuclei, windows, budget)
    assert len(chosen) == min(budget, len(unlimited))
    assert chosen == unlimited[:budget]  # best propagated score first


def test_select_neighbour_that_is_also_a_nucleus_keeps_both_rules() -> None:
    ids = chain(6)
    nuclei = [nucleus("m01", 0.9, "vector"), nucleus("m02", 0.4, "fulltext")]
    windows = {"m01": ids[0:4], "m02": ids[1:5]}
    chosen = select(nuclei, windows, decay=0.35)
    by_id = {s.id: s for s in chosen}
    # m02 is a nucleus and a neighbour of m01: it keeps both rules and earns from both windows
    assert by_id["m02"] == Selected("m02", pytest.approx(0.4 + 0.9 * 0.35),
                                    ("fulltext", "neighbour"), True)
    assert [s.id for s in chosen].count("m02") == 1
    assert by_id["m04"] == Selected("m04", pytest.approx(0.4 * 0.35**2), ("neighbour",), False)


def test_select_scores_add_up_across_windows() -> None:
    ids = chain(5)
    nuclei = [nucleus("m00", 0.8), nucleus("m04", 0.2)]
    windows = {"m00": ids[0:3], "m04": ids[2:5]}
    by_id = {s.id: s for s in select(nuclei, windows, decay=0.5)}
    assert by_id["m02"].score == pytest.approx(0.8 * 0.25 + 0.2 * 0.25)
    assert by_id["m03"].score == pytest.approx(0.2 * 0.5)


def test_select_turn_between_two_hits_beats_a_lone_neighbour() -> None:
    ids = chain(7)
    nuclei = [nucleus("m01", 0.5), nucleus("m03", 0.5), nucleus("m06", 0.6)]
    windows = {"m01": ids[0:3], "m03": ids[2:5], "m06": ids[5:7]}
    chosen = [s.id for s in select(nuclei, windows, budget=4, decay=0.35)]
    assert chosen == ["m06", "m01", "m03", "m02"]


@st.composite
def selection_cases(
    draw: st.DrawFn,
) -> tuple[list[Fused], dict[str, list[str]], int | None]:
    """Nuclei at random places of one chain, best first, each with a window around it."""
    ids = chain(draw(st.integers(1, 12)))
    positions = draw(st.lists(st.integers(0, len(ids) - 1), unique=True, min_size=1))
    before, after = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    nuclei = [nucleus(ids[p], 1.0 / (i + 1)) for i, p in enumerate(positions)]
    windows = {ids[p]: ids[max(0, p - before) : p + after + 1] for p in positions}
    return nuclei, windows, draw(st.none() | st.integers(0, 15))


@given(selection_cases())
def test_property_select_no_duplicates_and_budget(
    case: tuple[list[Fused], dict[str, list[str]], int | None],
) -> None:
    nuclei, windows, budget = case
    chosen = select(nuclei, windows, budget)
    chosen_ids = [s.id for s in chosen]
    assert len(chosen_ids) == len(set(chosen_ids))
    unlimited = select(nuclei, windows)
    assert {s.id for s in unlimited} == {i for n in nuclei for i in windows[n.id]}
    if budget is not None:
        assert chosen == unlimited[:budget]
    nucleus_ids = {n.id for n in nuclei}
    for s in chosen:
        assert s.nucleus == (s.id in nucleus_ids)
        assert "neighbour" in s.rules or s.nucleus


# --- clusters -----------------------------------------------------------------------------------


def test_clusters_consecutive_ids_form_one_run() -> None:
    ids = chain(4)
    assert clusters(ids, set(pairwise(ids))) == [ids]


def test_clusters_gap_splits() -> None:
    ids = chain(6)
    links = set(pairwise(ids))
    assert clusters(["m00", "m01", "m03", "m04"], links) == [["m00", "m01"], ["m03", "m04"]]


def test_clusters_overlapping_and_touching_windows_merge() -> None:
    ids = chain(9)
    links = set(pairwise(ids))
    first, second, touching = ids[0:3], ids[2:5], ids[5:7]  # overlap at m02, touch at m04|m05
    merged = sorted(set(first + second + touching))
    assert clusters(merged, links) == [ids[0:7]]


def test_clusters_unknown_link_splits_even_if_adjacent_in_order() -> None:
    # two sessions, interleaved ids without a NEXT link between them
    assert clusters(["a1", "b1"], {("a0", "a1")}) == [["a1"], ["b1"]]


def test_clusters_empty() -> None:
    assert clusters([], set()) == []


@given(st.lists(st.integers(0, 30), unique=True).map(sorted))
def test_property_clusters_partition_in_order(positions: list[int]) -> None:
    ids = [f"m{p:02d}" for p in positions]
    links = set(pairwise(chain(31)))
    runs = clusters(ids, links)
    assert [i for run in runs for i in run] == ids
    for run in runs:
        assert all((a, b) in links for a, b in pairwise(run))
    for left, right in pairwise(runs):
        assert (left[-1], right[0]) not in links


def test_select_heads_gives_windows_to_the_first_budget_or_the_first_k_only() -> None:
    fused = [Fused(i, s, ("vector",), n) for n, (i, s) in enumerate(
        [("a", 0.9), ("b", 0.5), ("c", 0.4)], start=1)]
    windows = {"a": ["a", "a2"], "b": ["b", "b2"], "c": ["c", "c2"]}
    under_budget = select_heads(fused, windows, 4, 99, 0.35)
    assert [s.id for s in under_budget] == ["a", "b", "c", "a2"]  # b2, c2: beyond the budget
    without = select_heads(fused, windows, None, 2, 0.35)
    assert {s.id for s in without} == {"a", "a2", "b", "b2"}
