"""Unit tests of graphmem.formation.windows: which turn windows a session should have."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphmem.formation.windows import TURN_CHARS, WindowTurn, plan_windows, window_id

T0 = datetime(2023, 5, 8, tzinfo=UTC)


def _turns(n: int) -> list[WindowTurn]:
    return [WindowTurn(f"m{i}", "alice" if i % 2 else "bob", f"text {i}",
                       T0 + timedelta(seconds=30 * i)) for i in range(n)]


def test_every_run_of_3_and_5_consecutive_turns() -> None:
    drafts = plan_windows("o", "s", _turns(7))
    threes = [[t.id for t in d.turns] for d in drafts if d.size == 3]
    fives = [[t.id for t in d.turns] for d in drafts if d.size == 5]
    assert threes == [[f"m{i}", f"m{i + 1}", f"m{i + 2}"] for i in range(5)]
    assert fives == [[f"m{i + j}" for j in range(5)] for i in range(3)]


def test_a_short_session_gets_one_window_per_size_and_a_single_turn_none() -> None:
    drafts = plan_windows("o", "s", _turns(2))
    assert [(d.size, len(d.turns)) for d in drafts] == [(3, 2), (5, 2)]
    assert plan_windows("o", "s", _turns(1)) == []
    assert plan_windows("o", "s", []) == []


def test_ids_are_deterministic_and_change_with_the_covered_turns() -> None:
    a = window_id("o", "s", 3, ["m1", "m2", "m3"])
    assert a == window_id("o", "s", 3, ["m1", "m2", "m3"])
    assert a != window_id("o", "s", 3, ["m1", "late", "m2"])
    assert a != window_id("o", "s", 5, ["m1", "m2", "m3"])
    assert a != window_id("p", "s", 3, ["m1", "m2", "m3"])


def test_a_late_turn_changes_only_the_windows_that_cover_it() -> None:
    turns = _turns(8)
    before = {d.id for d in plan_windows("o", "s", turns)}
    late = WindowTurn("late", "bob", "late", T0 + timedelta(seconds=95))
    after_drafts = plan_windows("o", "s", [*turns[:4], late, *turns[4:]])
    after = {d.id for d in after_drafts}
    changed = {d.id for d in after_drafts if "late" in [t.id for t in d.turns]}
    assert after - before == changed
    assert len(before - after) == 2 + 4  # windows that spanned the gap between m3 and m4


def test_row_carries_text_times_and_members() -> None:
    turns = [*_turns(2), WindowTurn("m2", "bob", "x" * (TURN_CHARS + 50), T0 + timedelta(1))]
    draft = plan_windows("o", "s", turns, sizes=(3,))[0]
    row = draft.row([0.5, 0.5])
    assert row["message_ids"] == ["m0", "m1", "m2"] and row["start_id"] == "m0"
    assert row["first_at"] == T0 and row["last_at"] == T0 + timedelta(1)
    assert row["search_text"].splitlines()[0] == "bob: text 0"
    assert len(row["search_text"].splitlines()[2]) == len("bob: ") + TURN_CHARS
    assert row["embedding"] == [0.5, 0.5] and row["size"] == 3
