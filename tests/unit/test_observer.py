"""Unit tests of graphmem.formation.observer: windows, segment, and the no-LLM HeuristicFinder.

Pure: no database, no model. Turns are built by hand; ``Turn.id`` is the turn's index in the
session so a finder can tell where its window starts.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.formation.observer import (
    OVERLAP,
    WINDOW,
    HeuristicFinder,
    Turn,
    cosine,
    segment,
    windows,
)

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
E1 = (1.0, 0.0, 0.0)
E2 = (0.0, 1.0, 0.0)
E3 = (0.0, 0.0, 1.0)


def turns(n: int, vectors: Sequence[tuple[float, ...]] | None = None,
          pauses: Sequence[int] = (), gap: timedelta = timedelta(hours=2)) -> list[Turn]:
    """n turns 30 s apart (ids "0".."n-1"); a turn listed in ``pauses`` comes ``gap`` later."""
    out: list[Turn] = []
    at = T0
    for i in range(n):
        if i:
            at += gap if i in pauses else timedelta(seconds=30)
        vector = vectors[i] if vectors is not None else ()
        out.append(Turn(str(i), "alice" if i % 2 == 0 else "bob", f"turn {i}", at, vector))
    return out


def starts_of(episodes: list[list[Turn]]) -> list[int]:
    return [int(e[0].id) for e in episodes]


@dataclass
class ScriptedFinder:
    """Answers each window with ``answer(window, first_new)``; records what it was asked."""

    answer: object = None
    calls: list[tuple[int, int, int]] = field(default_factory=list)  # (start, len, first_new)

    def find(self, window: Sequence[Turn], first_new: int) -> list[int]:
        self.calls.append((int(window[0].id), len(window), first_new))
        return list(self.answer(window, first_new)) if callable(self.answer) else []


# --- windows ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "expected"), [
    (0, []),
    (1, [(0, 0)]),
    (8, [(0, 0)]),
    (9, [(0, 0), (6, 2)]),
    (14, [(0, 0), (6, 2)]),
    (20, [(0, 0), (6, 2), (12, 2)]),
])
def test_windows(n: int, expected: list[tuple[int, int]]) -> None:
    assert list(windows(n)) == expected


def test_window_defaults() -> None:
    assert (WINDOW, OVERLAP) == (8, 2)


@given(st.integers(0, 200), st.integers(2, 12), st.data())
def test_windows_new_positions_partition_the_turns(n: int, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    spans = list(windows(n, size, overlap))
    new = [i for start, first_new in spans
           for i in range(start + first_new, min(start + size, n))]
    assert new == list(range(n))  # every turn is new in exactly one window, in order
    for k, (start, first_new) in enumerate(spans):
        assert first_new == (0 if k == 0 else overlap)
        assert start < n


# --- segment ------------------------------------------------------------------------------------

def test_segment_of_nothing_is_nothing() -> None:
    finder = ScriptedFinder()
    assert segment([], finder) == []
    assert finder.calls == []


def test_segment_without_boundaries_is_one_episode() -> None:
    ts = turns(20)
    finder = ScriptedFinder()
    assert segment(ts, finder) == [ts]
    assert finder.calls == [(0, 8, 0), (6, 8, 2), (12, 8, 2)]


def test_segment_maps_window_positions_to_the_session() -> None:
    ts = turns(20)
    answers = {0: [3], 6: [4], 12: [5]}  # window-relative: turns 3, 10 and 17
    episodes = segment(ts, ScriptedFinder(lambda w, f: answers[int(w[0].id)]))
    assert starts_of(episodes) == [0, 3, 10, 17]
    assert [t for e in episodes for t in e] == ts


def test_segment_ignores_position_zero_and_context_positions() -> None:
    ts = turns(14)
    # window 0 says 0 (the first turn is always a start anyway); window 1 (start 6) says 0 and 1,
    # its context (turns 6, 7), which window 0 already decided against.
    answers = {0: [0], 6: [0, 1]}
    episodes = segment(ts, ScriptedFinder(lambda w, f: answers[int(w[0].id)]))
    assert starts_of(episodes) == [0]


def test_segment_ignores_positions_outside_the_window() -> None:
    ts = turns(10)
    answers = {0: [9, 12], 6: []}  # window 0 holds turns 0..7: 9 and 12 are not its positions
    episodes = segment(ts, ScriptedFinder(lambda w, f: answers[int(w[0].id)]))
    assert starts_of(episodes) == [0]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 45), st.data())
def test_segment_property(n: int, data: st.DataObject) -> None:
    """Random sessions and random (in-window) finder answers: every turn in exactly one episode,
    order kept, and boundaries exactly at the answered new positions >= 1."""
    ts = turns(n)
    expected: set[int] = set()

    def answer(window: Sequence[Turn], first_new: int) -> list[int]:
        picked = data.draw(st.lists(st.integers(0, len(window) - 1), max_size=len(window)))
        start = int(window[0].id)
        expected.update(start + p for p in picked if p >= max(first_new, 1))
        return picked

    finder = ScriptedFinder(answer)
    episodes = segment(ts, finder)
    assert [t for e in episodes for t in e] == ts
    assert all(episodes)
    assert set(starts_of(episodes)) == ({0} | expected if n else set())
    assert [(s, f) for s, _, f in finder.calls] == list(windows(n))
    assert all(length == min(WINDOW, n - s) for s, length, _ in finder.calls)


# --- HeuristicFinder ----------------------------------------------------------------------------

def test_cosine() -> None:
    assert cosine(E1, E1) == pytest.approx(1.0)
    assert cosine(E1, E2) == 0.0
    assert cosine((0.0, 0.0), E1[:2]) == 0.0
    assert cosine((1.0, 1.0), (1.0, 0.0)) == pytest.approx(1 / math.sqrt(2))


def test_pause_longer_than_gap_starts_an_episode() -> None:
    ts = turns(12, pauses=[4, 9])
    assert HeuristicFinder().find(ts[:8], 0) == [4]
    assert starts_of(segment(ts, HeuristicFinder())) == [0, 4, 9]


def test_pause_ignores_min_turns_and_window_tail() -> None:
    ts = turns(8, pauses=[1, 7])
    assert HeuristicFinder().find(ts, 0) == [1, 7]


def test_pause_of_exactly_gap_does_not_split() -> None:
    ts = turns(8, pauses=[4], gap=timedelta(minutes=30))
    assert HeuristicFinder().find(ts, 0) == []
    assert HeuristicFinder(gap=timedelta(minutes=29)).find(ts, 0) == [4]


def test_pause_in_context_is_not_reported_again() -> None:
    ts = turns(8, pauses=[1])
    assert HeuristicFinder().find(ts, 2) == []


def test_two_topics_give_one_boundary_at_the_change() -> None:
    ts = turns(10, [E1] * 5 + [E2] * 5)
    assert HeuristicFinder().find(ts, 0) == [5]
    assert starts_of(segment(ts, HeuristicFinder())) == [0, 5]


def test_the_boundary_is_at_the_valley_not_on_its_slope() -> None:
    # similarities around a change at 5 (span 2): 1, 1, 1, .71, 0, .71, 1: 4 and 6 lie on the
    # slopes with a one-sided depth of .29 >= 0.15, but only 5 is a valley
    ts = turns(10, [E1] * 5 + [E2] * 5)
    assert HeuristicFinder(min_turns=1).find(ts[:8], 0) == [5]


# A clean change of topic in a 20-turn session is found wherever it falls: the heuristic sees
# the whole stretch at once (in windows of 8, a change at a window's edge had no neighbour).
@pytest.mark.parametrize("cut", range(3, 18))
def test_a_clean_topic_change_is_found_wherever_it_falls(cut: int) -> None:
    ts = turns(20, [E1] * cut + [E2] * (20 - cut))
    assert starts_of(segment(ts, HeuristicFinder())) == [0, cut]


def test_uniform_vectors_give_no_boundary() -> None:
    ts = turns(20, [E1] * 20)
    assert segment(ts, HeuristicFinder()) == [ts]
    v = (0.3, 0.5, 0.8)
    ts = turns(20, [v] * 20)
    assert segment(ts, HeuristicFinder()) == [ts]


def test_min_turns_is_respected() -> None:
    # the topic changes after two turns: too early for an episode of at least 3 turns
    ts = turns(8, [E1] * 2 + [E2] * 6)
    found = HeuristicFinder().find(ts, 0)
    assert all(p >= 3 for p in found)
    assert HeuristicFinder(min_turns=2).find(ts, 0) == [2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([E1, E2, E3, (0.6, 0.8, 0.0), (0.0, 0.6, 0.8)]),
                min_size=1, max_size=WINDOW), st.integers(2, 5))
def test_min_turns_property(vectors: list[tuple[float, ...]], min_turns: int) -> None:
    """Without pauses, boundaries in a window are at least min_turns apart (and from 0), and
    leave at least two turns after them."""
    ts = turns(len(vectors), vectors)
    found = HeuristicFinder(min_turns=min_turns, depth=0.01).find(ts, 0)
    edges = [0, *found]
    assert all(b - a >= min_turns for a, b in itertools.pairwise(edges))
    assert all(len(ts) - p >= 2 for p in found)


def test_min_turns_counts_from_the_window_start_with_context() -> None:
    ts = turns(8, [E1] * 4 + [E2] * 4)  # context 0, 1; the change at 4 is 4 turns in
    assert all(p >= 3 for p in HeuristicFinder().find(ts, 2))


def test_turns_without_vectors_never_split() -> None:
    ts = turns(20)
    assert segment(ts, HeuristicFinder()) == [ts]
    assert segment(ts, HeuristicFinder(depth=1e-9, min_turns=1)) == [ts]


def test_turns_without_vectors_between_two_topics_do_not_split() -> None:
    # only the turns around the change have no vector: no similarity can be measured there
    vectors = [E1] * 4 + [()] * 4 + [E2] * 4
    ts = turns(12, vectors)
    assert segment(ts, HeuristicFinder()) == [ts]


def test_turns_without_vectors_split_on_pauses() -> None:
    ts = turns(20, pauses=[11])
    assert starts_of(segment(ts, HeuristicFinder())) == [0, 11]


def test_finder_answers_are_new_positions_in_range() -> None:
    ts = turns(8, [E1, E2, E1, E2, E3, E1, E2, E3], pauses=[3, 5])
    for first_new in range(0, 8):
        found = HeuristicFinder(min_turns=1, depth=0.0).find(ts, first_new)
        assert all(max(first_new, 1) <= p < len(ts) for p in found)
        assert found == sorted(set(found))
