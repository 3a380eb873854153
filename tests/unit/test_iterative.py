"""Unit tests of graphmem.retrieval.iterative: the pool (score = max over queries), reservations,
assembly (core first, dedup before truncation), the bounds on calls, and the fallback."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.retrieval.iterative import (
    Bounds,
    Budget,
    Candidate,
    DeciderFailed,
    Decision,
    Found,
    Key,
    Pool,
    View,
    assemble,
    iterate,
)

IDS = st.sampled_from([f"m{i}" for i in range(12)])
UNITS = st.sampled_from(["message", "episode"])
CANDIDATE = st.builds(lambda u, i, s, t: Candidate(u, i, s, tokens=t), UNITS, IDS,
                      st.floats(0, 1, allow_nan=False), st.integers(0, 30))
LISTS = st.lists(st.lists(CANDIDATE, max_size=8), min_size=1, max_size=5)


def _ranked(cands: Sequence[Candidate]) -> tuple[Found, ...]:
    pool = Pool()
    pool.add("q", 1, cands)
    return pool.ranked()


@given(LISTS)
def test_score_is_the_max_over_the_queries_that_found_it(lists: list[list[Candidate]]) -> None:
    pool = Pool()
    for n, cands in enumerate(lists):
        pool.add(f"q{n}", n + 1, cands)
    for f in pool.ranked():
        sightings = [(n, c) for n, cs in enumerate(lists) for c in cs if c.key == f.key]
        assert f.score == max(c.score for _, c in sightings)
        assert f.candidate.score == f.score
        assert f.queries == tuple(dict.fromkeys(f"q{n}" for n, _ in sightings))
        assert f.round == sightings[0][0] + 1
    keys = [f.key for f in pool.ranked()]
    assert len(keys) == len(set(keys))
    assert [f.score for f in pool.ranked()] == sorted((f.score for f in pool.ranked()),
                                                      reverse=True)


@given(st.lists(CANDIDATE, max_size=15), st.lists(st.tuples(UNITS, IDS), max_size=6),
       st.lists(st.tuples(UNITS, IDS), max_size=6), st.none() | st.integers(0, 10),
       st.none() | st.integers(0, 120))
def test_assembly_core_first_then_reservations_dedup_before_truncation(
        cands: list[Candidate], core: list[Key], reserved: list[Key], items: int | None,
        tokens: int | None) -> None:
    ranked = _ranked(cands)
    known = {f.key for f in ranked}
    out = assemble(core, reserved, ranked, Budget(items, tokens))
    keys = [f.key for f in out]
    assert len(keys) == len(set(keys))  # each identity once
    # the full order without budget: core, then reservations, then the rest by score
    full = [f.key for f in assemble(core, reserved, ranked, Budget())]
    expected = list(dict.fromkeys([*(k for k in core if k in known),
                                   *(k for k in reserved if k in known),
                                   *(f.key for f in ranked)]))
    assert full == expected
    assert keys == full[: len(keys)]  # a prefix: truncation after dedup
    if items is not None:
        assert len(keys) <= items
    spent = sum(f.candidate.tokens for f in out)
    if tokens is not None:
        assert spent <= tokens
    # maximal: the next item would break a budget
    if len(keys) < len(full):
        nxt = {f.key: f for f in ranked}[full[len(keys)]]
        assert (items is not None and len(keys) == items) or (
            tokens is not None and spent + nxt.candidate.tokens > tokens)
    # duplicates never take budget: with room for every distinct key, all come back
    if (items is None or items >= len(full)) and (
            tokens is None or tokens >= sum(f.candidate.tokens for f in ranked)):
        assert len(keys) == len(full)


@dataclass
class Scripted:
    """A decider answering from a script; records what it saw."""

    script: list[Decision | Exception]
    name: str = "scripted"
    views: list[View] = field(default_factory=list)

    def decide(self, view: View) -> Decision:
        self.views.append(view)
        step = self.script[min(len(self.views), len(self.script)) - 1]
        if isinstance(step, Exception):
            raise step
        return step


def _recall_table(table: dict[str, list[Candidate]]) -> tuple[list[str], object]:
    calls: list[str] = []

    def recall(q: str) -> list[Candidate]:
        calls.append(q)
        return table.get(q, [Candidate("message", f"x-{q}", 0.01, 1)])
    return calls, recall


def _c(id_: str, score: float, rank: int = 1) -> Candidate:
    return Candidate("message", id_, score, rank)


def test_reservations_first_hit_of_each_new_query_and_order() -> None:
    table = {
        "q": [_c("a", 0.9), _c("b", 0.8, 2), _c("c", 0.7, 3)],
        "f1": [_c("a", 0.5), _c("d", 0.05, 2)],      # first hit already in the core: none
        "f2": [_c("e", 0.01), _c("b", 0.95, 2)],     # low score, reserved anyway
    }
    calls, recall = _recall_table(table)
    decider = Scripted([Decision(keep=(("message", "a"),), queries=("f1", "f2")),
                        Decision(sufficient=True)])
    out = iterate("q", recall, decider, Bounds(rounds=3, queries=2, core=2),  # type: ignore[arg-type]
                  Budget(items=3))
    assert calls == ["q", "f1", "f2"]
    assert out.reserved == (("message", "e"),)
    assert out.core == (("message", "a"),)
    # core, reservation, then the rest by max score: b (0.95 via f2)
    assert [f.key[1] for f in out.items] == ["a", "e", "b"]
    assert {f.key[1]: f.score for f in out.items}["b"] == 0.95
    assert out.stop == "sufficient"
    assert decider.views[1].round == 2 and decider.views[1].issued == ("q", "f1", "f2")


@given(st.integers(0, 5), st.integers(1, 4), st.integers(1, 3), st.booleans())
@settings(max_examples=60)
def test_bounds_on_decider_calls_and_recalls(rounds: int, per_round: int, patience: int,
                                             always_new: bool) -> None:
    counter = iter(range(10_000))

    class Greedy:
        name = "greedy"
        calls = 0

        def decide(self, view: View) -> Decision:
            Greedy.calls += 1
            qs = tuple(f"f{next(counter)}" for _ in range(per_round + 2))  # asks too many
            keep = tuple(f.key for f in view.pool[:1]) if always_new else ()
            return Decision(keep=keep, queries=qs)

    def recall(q: str) -> list[Candidate]:
        return [_c(f"hit-{q}", 1.0 / (len(q) + 1))]

    seen: list[str] = []

    def counted(q: str) -> list[Candidate]:
        seen.append(q)
        return recall(q)

    out = iterate("q", counted, Greedy(), Bounds(rounds=rounds, queries=per_round,
                                                 patience=patience, core=100),
                  Budget(items=1000))
    assert out.decider_calls == Greedy.calls <= max(rounds, 0)
    assert out.recalls == len(seen) <= 1 + max(rounds - 1, 0) * per_round
    assert len(seen) == len(set(seen))  # no query twice
    if rounds == 0:
        assert out.decider_calls == 0 and seen == ["q"]


def test_no_progress_stops_after_patience_rounds() -> None:
    # every follow-up finds only what is already in the first K: no progress
    calls: list[str] = []
    n = iter(range(100))

    def same(q: str) -> list[Candidate]:
        calls.append(q)
        return [_c("a", 0.5)]

    class Asker:
        name = "asker"

        def decide(self, view: View) -> Decision:
            return Decision(queries=(f"f{next(n)}",))

    out = iterate("q", same, Asker(), Bounds(rounds=10, queries=1, patience=2), Budget(5))
    assert out.stop == "no_progress"
    assert out.decider_calls == 3  # round 1 progresses (first hits), then two idle rounds


def test_decider_failure_falls_back_to_the_first_f_candidates() -> None:
    table = {"q": [_c(i, 1.0 - n / 10, n + 1) for n, i in enumerate("abcdefg")],
             "f": [_c("z", 2.0)]}
    _, recall = _recall_table(table)
    decider = Scripted([Decision(keep=(("message", "g"),), queries=("f",)),
                        DeciderFailed("malformed twice")])
    out = iterate("q", recall, decider, Bounds(rounds=3, queries=1, fallback=3, core=5),  # type: ignore[arg-type]
                  Budget(items=5))
    assert out.stop == "decider_failed"
    assert out.rounds[-1].error == "malformed twice"
    # g was kept before the failure; the fallback fills the core up to f = 3 by score
    assert out.core == (("message", "g"), ("message", "z"), ("message", "a"))
    assert [f.key[1] for f in out.items] == ["g", "z", "a", "b", "c"]


def test_core_is_capped_and_keeps_only_known_candidates() -> None:
    _, recall = _recall_table({"q": [_c(i, 0.5, n + 1) for n, i in enumerate("abcd")]})
    keep = (("message", "d"), ("message", "nope"), ("message", "c"), ("message", "d"),
            ("message", "b"))
    out = iterate("q", recall, Scripted([Decision(keep=keep, sufficient=True)]),  # type: ignore[arg-type]
                  Bounds(core=2), Budget(items=3))
    assert out.core == (("message", "d"), ("message", "c"))
    assert [f.key[1] for f in out.items] == ["d", "c", "a"]
    assert out.rounds[0].kept == out.core


def test_without_decider_the_result_is_the_first_recall() -> None:
    _, recall = _recall_table({"q": [_c(i, 1.0 - n / 10, n + 1) for n, i in enumerate("abc")]})
    out = iterate("q", recall, None, Bounds(rounds=0), Budget(items=2))
    assert [f.key[1] for f in out.items] == ["a", "b"] and out.decider_calls == 0
