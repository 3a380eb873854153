"""Unit tests of graphmem.procedural.cases, .clustering, .skills and .recommend: quality, LCS and
consensus, clustering, skill versioning and flags, preconditions and counter-evidence, what a
request asks for, a skill as a prompt gets it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from graphmem.procedural import recommend
from graphmem.procedural import skills as sk
from graphmem.procedural.cases import (
    draft,
    entities,
    normalise_request,
    quality,
    written_values,
)
from graphmem.procedural.clustering import (
    Point,
    adjusted_rand_index,
    cluster,
    collapse,
    lcs,
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
                 [a("get"), a("cancel")] if i < 3 else [a("search"), a("book")])
           for i in range(6)]
    first = cluster(pts)
    assert first == cluster(list(reversed(pts)))
    assert sorted(first) == [["c0", "c1", "c2"], ["c3", "c4", "c5"]]
    assert cluster([]) == [] and cluster(pts[:1]) == [["c0"]]
    assert cluster(pts[:2]) == [["c0", "c1"]]  # two alike: together
    assert sorted(cluster([pts[0], pts[3]])) == [["c0"], ["c3"]]


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


def w(tool: str, slots: dict[str, str] | None = None, checked: list[str] | None = None,
      ) -> Action:
    """A write with its typed slots and the reads that checked its value."""
    return Action(tool=tool, keys=sorted(slots or {}), writes=True, slots=slots or {},
                  checked=checked or [])


def r(tool: str) -> Action:
    return Action(tool=tool, keys=["reservation_id"], writes=False,
                  slots={"reservation_id": "reservation id"})


RES = {"reservation_id": "reservation id"}
CHECK = ["get_reservation:reservation id"]


def test_steps_keep_the_slots_every_aligned_call_passed() -> None:
    good = [[r("get_reservation"), w("cancel_x", {**RES, "reason": "text"}, CHECK)],
            [r("get_reservation"), w("cancel_x", RES, CHECK)]]
    steps = sk.consensus(good)
    assert steps[1].slots == RES and steps[0].slots == RES


def test_preconditions_are_the_reads_most_successful_runs_made_before_writing() -> None:
    good = [[r("get_user"), r("get_reservation"), w("cancel_x", RES, CHECK)],
            [r("get_reservation"), w("cancel_x", RES, CHECK)],
            [r("get_reservation"), r("search"), w("cancel_x", RES)]]
    steps = sk.consensus(good)
    found = sk.preconditions(steps, good)
    assert [(c.before, c.read, c.same, c.support, c.of) for c in found] == [
        ("cancel_x", "get_reservation", ["reservation id"], 3, 3)]  # get_user: 1 of 3, dropped


def test_counter_evidence_counts_what_failed_runs_did_differently_and_keeps_it_all() -> None:
    good = [[r("get_reservation"), w("cancel_x", RES, CHECK)],
            [r("get_reservation"), w("cancel_x", RES, CHECK)]]
    steps = sk.consensus(good)
    checks = sk.preconditions(steps, good)
    bad = [("f1", [w("cancel_x", RES)]),                          # skipped the check
           ("f2", [r("get_reservation"), w("cancel_x", {})]),     # left the slot out
           ("f3", [r("get_reservation"), w("book_y", RES)]),      # another write, not cancel
           ("f4", [r("get_reservation")]),                        # changed nothing
           ("f5", [r("get_reservation"), w("cancel_x", RES), w("cancel_x", RES)]),
           ("f6", [r("get_reservation"), w("cancel_x", RES, CHECK)])]  # the same steps
    found = sk.counter_evidence(steps, checks, good, bad)
    got = [(c.kind, c.count, c.of, c.cases) for c in found]
    assert got == [
        ("extra_write", 1, 6, ["f3"]),
        ("missing_write", 2, 6, ["f3", "f4"]),
        ("no_change", 1, 6, ["f4"]),
        ("skipped_check", 1, 6, ["f1"]),
        ("other_slots", 1, 6, ["f2"]),
        ("repeated_write", 1, 6, ["f5"]),
        ("same_steps", 1, 6, ["f6"])]
    assert found[0].what == "called book_y, which the successful runs did not"
    assert found[3].what == "called cancel_x without calling get_reservation before it"
    assert sum(c.count for c in found) >= len(bad)  # every failed run is accounted for
    assert sk.counter_evidence(steps, checks, good, []) == []


def test_a_skill_renders_compactly_with_slots_checks_and_counter_evidence() -> None:
    from graphmem.procedural.models import CaseMatch, Recommendation, Skill

    good = [[r("get_reservation"), w("cancel_x", RES, CHECK)]] * 2
    steps = sk.consensus(good)
    checks = sk.preconditions(steps, good)
    against = sk.counter_evidence(steps, checks, good, [("f1", [w("cancel_x", RES)])])
    skill = Skill(id="s", lineage="s", version=1, owner="o", name="cancel_x", description="d",
                  when_to_use='Requests like "cancel it"', steps=steps, successes=2, failures=1,
                  valid_from=T0, recorded_at=T0, preconditions=checks, counter_evidence=against,
                  why=Recommendation(similarity=0.61, words=["cancel"], successes=2, failures=1,
                                     cases=[CaseMatch(id="c1", intent="cancel it",
                                                      outcome="success", similarity=0.7)]))
    text = recommend.render(skill)
    assert ("steps: get_reservation(reservation_id: reservation id) -> cancel_x(reservation_id: "
            "reservation id)*") in text
    assert ("before cancel_x: get_reservation on the same reservation id (2 of 2)") in text
    assert "1 of 1 called cancel_x without calling get_reservation before it" in text
    assert 'why: similarity 0.61' in text and '"cancel"' in text and 'success "cancel it"' in text


def test_a_request_asks_for_a_skill_by_its_writes_verb() -> None:
    cancel = sk.consensus([[r("get_reservation"), w("cancel_reservation", RES)]])
    change = sk.consensus([[w("update_reservation_flights", RES)]])
    both = sk.consensus([[w("cancel_reservation", RES), w("update_reservation_flights", RES)]])
    ask = "I would like to cancel all of my upcoming flights"
    assert recommend.action_match(ask, cancel) == 2 / 3  # the verb, not "reservation"
    assert recommend.action_match(ask, change) == 0.0    # "flights" alone asks for no change
    assert recommend.action_match(ask, both) == 1 / 3    # half of what it changes was asked for
    assert recommend.action_match("Please modify my flights", change) == 1.0
    assert recommend.action_match("anything", []) == 0.0
    assert recommend.named(ask, cancel) == ["cancel"]
    assert recommend.named(ask, change) == ["flights"]


def test_a_failed_case_alone_in_its_cluster_counts_against_what_its_request_got() -> None:
    def view(id_: str, outcome: str, *tools: str) -> sk.CaseView:
        return sk.CaseView(id_, "req", [a(t) for t in tools], outcome, T0)

    cases = [view("c1", "success", "get_x", "cancel_x"), view("c2", "success", "cancel_x"),
             view("f1", "failure", "get_x", "refund_x")]
    by_procedure = {"c1": "p1", "c2": "p1", "f1": "p2"}
    assert sk.methods(cases, by_procedure)[0].contradicting == []  # refund_x: no such skill
    asked = {"c1": "q1", "c2": "q1", "f1": "q1"}  # it asked what c1 and c2 were asked
    assert sk.methods(cases, by_procedure, asked_of=asked)[0].contradicting == ["f1"]
