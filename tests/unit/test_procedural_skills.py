"""Unit tests of graphmem.procedural.cases, .clustering and .skills: quality, LCS and consensus,
clustering, skill versioning and flags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from graphmem.procedural import skills as sk
from graphmem.procedural.cases import (
    draft,
    entities,
    normalise_request,
    quality,
    written_values,
)
from graphmem.procedural.clustering import (
    EDGE_AT,
    NEAREST_AT,
    Point,
    adjusted_rand_index,
    cluster,
    collapse,
    lcs,
    similarity,
)
from graphmem.procedural.models import Action, Step

T0 = datetime(2024, 5, 15, 12, tzinfo=UTC)
tokens = st.lists(st.sampled_from("abcde"), max_size=12)


def a(tool: str, *keys: str) -> Action:
    return Action(tool=tool, keys=sorted(keys), writes=tool.startswith(("book", "cancel")))


def test_request_is_normalised_and_entities_found() -> None:
    assert normalise_request("Hi there!  I want   to cancel") == "I want to cancel"
    found = entities(["my id is mia_li_3668, flight HAT136 from JFK on 2024-05-20, ok"])
    assert {"2024", "hat136", "jfk", "mia_li_3668"} <= set(found) and "ok" not in found
    assert found == sorted(found)


def test_quality_scores_what_a_case_can_teach() -> None:
    good = [Step(index=0, kind="user", text="cancel"),
            Step(index=1, kind="tool_call", tool="cancel_x", arguments="{}", writes=True)]
    assert quality(good, "failure").score == 1.0  # failure is evidence, not low quality
    assert "outcome unknown" in quality(good, "unknown").reason
    nothing = quality([Step(index=0, kind="assistant", text="hello")], "success")
    assert nothing.filtered and "no user request" in nothing.reason
    errors = [*good, Step(index=2, kind="tool_result", text="Error: not found", error=True)]
    assert quality(errors, "success").score < 1.0


def test_draft_takes_the_first_request_and_the_actions() -> None:
    steps = [Step(index=0, kind="system", text="policy"),
             Step(index=1, kind="user", text="Hello! cancel booking ABC123"),
             Step(index=2, kind="tool_call", tool="cancel_booking", arg_keys=["id"], writes=True)]
    d = draft("tr-1", None, steps, "success", T0)
    assert d.intent == "cancel booking ABC123" and d.writes == ["cancel_booking"]
    assert d.occurred_at == T0 and d.step_indices == [0, 1, 2] and "abc123" in d.entities
    assert draft("tr-1", "Cancel it", steps, "success", T0).intent == "Cancel it"


def test_written_values_are_what_the_writes_passed() -> None:
    reason = "the customer changed plans " * 4
    steps = [Step(index=0, kind="user", text="move my flight"),
             Step(index=1, kind="tool_call", tool="get_reservation", writes=False,
                  arguments='{"reservation_id": "READ1"}'),
             Step(index=2, kind="tool_call", tool="update_flights", writes=True,
                  arguments='{"reservation_id": "ABC123", "flights": [{"flight": "HAT041", '
                            '"date": "2024-05-21"}], "cabin": "economy", "bags": 1, '
                            f'"paid": 2.5, "refund": true, "note": null, "reason": "{reason}"}}'),
             Step(index=3, kind="tool_call", tool="cancel_x", writes=True, arguments="not json")]
    assert written_values(steps) == ["2.5", "2024-05-21", "abc123", "economy", "hat041"]
    d = draft("tr-1", None, steps, "success", T0)
    assert {"abc123", "hat041", "economy"} <= set(d.entities) and "read1" not in d.entities
    assert entities(["flight HAT136"], ["economy"]) == ["economy", "hat136"]


@given(tokens, tokens)
def test_lcs_is_a_common_subsequence_of_symmetric_length(x: list[str], y: list[str]) -> None:
    common = lcs(x, y)
    assert len(common) == len(lcs(y, x)) <= min(len(x), len(y))
    for seq in (x, y):
        it = iter(seq)
        assert all(t in it for t in common)


def test_collapse_and_ari() -> None:
    assert collapse(["g", "g", "s", "g"]) == ["g", "s", "g"]
    assert adjusted_rand_index(list("aabb"), list("xxyy")) == 1.0
    assert adjusted_rand_index(list("aabb"), list("xyxy")) < 0.0


def test_clusters_are_deterministic_and_group_alike_cases() -> None:
    pts = [Point(f"c{i}", [1.0, 0.0] if i < 3 else [0.0, 1.0],
                 ["get", "cancel"] if i < 3 else ["search", "book"],
                 ["cancel"] if i < 3 else ["book"]) for i in range(6)]
    first = cluster(pts)
    assert first == cluster(list(reversed(pts)))
    assert sorted(first) == [["c0", "c1", "c2"], ["c3", "c4", "c5"]]


def test_a_stray_joins_its_nearest_case_when_similar_enough() -> None:
    group = [Point(f"c{i}", [1.0, 0.0], ["get", "cancel"], ["cancel"]) for i in range(3)]
    stray = Point("stray", [0.45, (1 - 0.45**2) ** 0.5], ["search", "book"], ["book"])
    far = Point("far", [-1.0, 0.0], ["think"], [])
    assert EDGE_AT > similarity(stray, group[0]) > NEAREST_AT  # 0.7 * 0.45, no action in common
    assert sorted(cluster([*group, stray, far])) == [["c0", "c1", "c2", "stray"], ["far"]]
    assert sorted(cluster([*group, stray, far], nearest_at=1.0)) == [
        ["c0", "c1", "c2"], ["far"], ["stray"]]


def test_consensus_keeps_the_majority_steps_in_order_with_common_keys() -> None:
    runs = [[a("get_user", "id"), a("search", "from", "to"), a("book_x", "id", "flight")],
            [a("get_user", "id", "x"), a("book_x", "id", "flight")],
            [a("get_user", "id"), a("get_user", "id"), a("search", "from"), a("book_x", "id")]]
    steps = sk.consensus(runs)
    assert [s.tool for s in steps] == ["get_user", "search", "book_x"]
    assert steps[0].keys == ["id"] and steps[2].keys == ["id"] and steps[2].writes
    assert [s.support for s in steps] == [3, 2, 3]
    assert sk.consensus([]) == []
    assert [s.tool for s in sk.consensus([runs[0]])] == ["get_user", "search", "book_x"]


@given(st.lists(st.lists(st.sampled_from(["g", "s", "book_x"]), max_size=8), min_size=1,
                max_size=6))
def test_consensus_steps_are_taken_by_a_majority(seqs: list[list[str]]) -> None:
    runs = [[a(t) for t in s] for s in seqs]
    for step in sk.consensus(runs):
        assert step.support * 2 > len([r for r in runs if r]) or len(runs) == 1


def test_pitfalls_name_what_failed_runs_did_differently() -> None:
    steps = sk.consensus([[a("get"), a("cancel_x")]])
    found = sk.pitfalls(steps, [[a("get"), a("book_y")], [a("get")]])
    assert found[0] == "1 of 2 failed runs called book_y, which the successful runs did not"
    assert "2 of 2 failed runs never called cancel_x" in found
    assert sk.pitfalls(steps, []) == []


def test_versioning_matches_by_shared_cases_and_explains_changes() -> None:
    known = [sk.Known("s1-v1", "s1", 1, ["a()"], frozenset({"c1", "c2"})),
             sk.Known("s2-v1", "s2", 1, ["b()"], frozenset({"c3"}))]
    got = sk.match([frozenset({"c3", "c4"}), frozenset({"c1", "c2", "c5"}), frozenset({"c9"})],
                   known)
    assert [m.known.id if m.known else None for m in got] == ["s2-v1", "s1-v1", None]
    assert sk.change_reason(["a()"], ["a()", "b()!"]) == "steps changed: added b()!"
    assert sk.change_reason(["a()", "b()"], ["b()", "a()"]) == "steps changed: reordered steps"
    assert sk.signature(sk.consensus([[a("get", "id"), a("cancel_x")]])) == [
        "get(id)", "cancel_x()!"]


def test_a_skill_whose_recent_executions_fail_is_flagged() -> None:
    def v(i: int, outcome: str) -> sk.CaseView:
        return sk.CaseView(f"c{i}", "x", [], outcome, T0 + timedelta(days=i))

    assert sk.flag([v(0, "success"), v(1, "success"), v(2, "failure")]) is None
    reason = sk.flag([v(0, "success"), v(1, "failure"), v(2, "failure")])
    assert reason is not None and reason.startswith("2 of the last 3 executions failed")
    assert sk.flag([v(0, "failure"), v(1, "failure"), v(2, "success")]) is None


def test_methods_group_successes_by_what_they_changed_across_clusters() -> None:
    def view(id_: str, outcome: str, *tools: str) -> sk.CaseView:
        return sk.CaseView(id_, "req", [a(t) for t in tools], outcome, T0)

    cases = [view("c1", "success", "get_x", "cancel_x"), view("c2", "success", "cancel_x"),
             view("c3", "success", "get_x", "book_x", "cancel_x"),
             view("f1", "failure", "get_x", "book_x"), view("f2", "failure", "cancel_x"),
             view("f3", "failure", "get_x")]
    clusters = {"c1": "k1", "c2": "k2", "c3": "k3", "f1": "k1", "f2": "k4", "f3": "k5"}
    found = sk.methods(cases, clusters)
    assert [(m.key, m.supporting, m.contradicting) for m in found] == [
        ("cancel_x", ["c1", "c2"], ["f1", "f2"]),  # f1: its request succeeded as cancel_x
        ("book_x,cancel_x", ["c3"], [])]  # f3 changed nothing and no success shares its cluster
    assert sk.method_key([a("get_x"), a("cancel_x"), a("book_x")]) == "book_x,cancel_x"
    assert sk.spoken("update_reservation_flights") == "update reservation flights"
    assert sk.methods(cases, clusters, min_successes=2)[0].key == "cancel_x"
    assert len(sk.methods(cases, clusters, min_successes=2)) == 1
