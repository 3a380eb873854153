"""The pure parts of the tau-bench benchmark (`graphmem.bench.tau`): what a run is scored on."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from graphmem.bench import tau
from graphmem.procedural.models import Skill, SkillStep


def _run(task: int, user: str | None, actions: list[str]) -> dict[str, Any]:
    info: dict[str, Any] = {"actions": [{"name": a, "kwargs": {}} for a in actions]}
    if user is not None:
        info["user_id"] = user
    return {"task_id": task, "trial": 0, "reward": 1.0, "info": {"task": info},
            "traj": [{"role": "system", "content": "policy"},
                     {"role": "user", "content": ""},
                     {"role": "user", "content": "Hi! I need to cancel my flight."}]}


def test_customer_is_the_user_id_else_the_task() -> None:
    assert tau.customer_of(_run(4, "omar_rossi_1241", [])) == "omar_rossi_1241"
    assert tau.customer_of(_run(5, "omar_rossi_1241", [])) == "omar_rossi_1241"
    assert tau.customer_of(_run(7, None, [])) == "task-7"


def test_gold_writes_keep_only_state_changing_actions() -> None:
    run = _run(1, "u", ["get_user_details", "cancel_reservation", "book_reservation"])
    assert tau.gold_writes(run) == {"cancel_reservation", "book_reservation"}


def test_query_is_the_first_user_message_with_words() -> None:
    assert tau.first_user(_run(1, "u", [])) == "Hi! I need to cancel my flight."


def _skill(*tools: str) -> Skill:
    at = datetime(2024, 5, 15, tzinfo=UTC)
    return Skill(id=f"sk-{'-'.join(tools)}", lineage="l", version=1, owner="o", name="n",
                 description="d", when_to_use="w", successes=1, failures=0, valid_from=at,
                 recorded_at=at, steps=[SkillStep(tool=t, writes=not t.startswith("get"),
                                                  support=1) for t in tools])


def test_recall_counts_the_gold_writes_among_the_skills_steps() -> None:
    gold = {"cancel_reservation", "book_reservation"}
    cancel, book = _skill("get_user", "cancel_reservation"), _skill("book_reservation")
    assert tau.covered(gold, [cancel]) == 0.5
    assert tau.covered(gold, [cancel, book]) == 1.0
    assert tau.covered(gold, []) == 0.0
    assert tau.best_single(gold, [_skill("get_user"), cancel, book]) == 0.5
    assert tau.best_single(gold, []) == 0.0


def test_precision_is_the_share_of_recommended_writes_the_task_makes() -> None:
    from graphmem.bench import tau_scoring as score

    gold = {"cancel_reservation"}
    cancel, book = _skill("get_user", "cancel_reservation"), _skill("book_reservation")
    assert score.precision(gold, [cancel]) == 1.0
    assert score.precision(gold, [cancel, book]) == 0.5
    assert score.precision(gold, [_skill("get_user")]) is None  # nothing recommended
    assert score.precision(gold, []) is None


def test_named_is_the_share_of_the_tasks_writes_the_request_names_and_a_skill_makes() -> None:
    from graphmem.bench import tau_scoring as score

    gold = {"cancel_reservation", "book_reservation"}
    skills = [_skill("get_user", "cancel_reservation"), _skill("book_reservation")]
    assert score.named(gold, "Please cancel my trip", skills) == 0.5  # booking not named
    assert score.named(gold, "Cancel it and book another flight", skills) == 1.0
    assert score.named(gold, "Book a new flight", skills[:1]) == 0.0  # no skill books
    assert score.named(gold, "What is my balance?", skills) == 0.0


def test_the_ceiling_is_the_best_choice_of_k_skills_formed() -> None:
    from graphmem.bench import tau_scoring as score

    gold = {"cancel_reservation", "book_reservation", "update_reservation_flights"}
    skills = [_skill("get_user"), _skill("cancel_reservation"), _skill("book_reservation"),
              _skill("cancel_reservation", "book_reservation")]
    assert score.best_of(gold, skills, 1) == 2 / 3
    assert score.best_of(gold, skills, 3) == 2 / 3  # no skill updates flights
    assert score.best_of(gold, skills[:3], 2) == 2 / 3 and score.best_of(gold, [], 3) == 0.0


def test_tasks_filter_and_labels() -> None:
    from graphmem.bench import tau_scoring as score

    assert score.parse_tasks("0-2,7") == {0, 1, 2, 7} and score.parse_tasks(None) is None
    runs = [_run(t, "u", ["cancel_reservation"]) for t in range(5)]
    assert [r["task_id"] for r in score.select(runs, {1, 3})] == [1, 3]
    assert score.labels_of(_run(4, "omar", ["get_user_details", "cancel_reservation",
                                            "book_reservation"])) == {
        "task": "4", "kind": "book_reservation,cancel_reservation", "customer": "omar"}
    try:
        score.parse_tasks("a-b")
    except ValueError as exc:
        assert "0-14" in str(exc)
    else:
        raise AssertionError("a bad range is refused")


def test_the_weight_is_chosen_on_the_training_runs_and_scored_on_the_test_runs() -> None:
    from graphmem.bench import tau_scoring as score

    def row(task: float, kind: float, customer: float) -> dict[str, Any]:
        ari = {"task": task, "kind": kind, "customer": customer}
        return {"clusters": 3, "ari": ari, "margin": score.margin(ari)}

    train = {"0": row(0.5, 0.4, 0.3), "0.5": row(0.9, 0.6, 0.4)}
    test = {"0": row(0.2, 0.2, 0.1), "0.5": row(0.1, 0.1, 0.5)}
    got = score.cross_validated(train, test)
    assert got["weight"] == 0.5 and got["test"] == test["0.5"]  # what it scores, good or bad
    assert score.margin({"task": 0.7, "kind": 0.6, "customer": 0.2}) == 0.7 + 0.6 - 0.2
    assert score.margin({"task": 0.0, "kind": 0.0, "customer": 0.0}) < score.margin(
        {"task": 0.5, "kind": 0.3, "customer": 0.4})  # grouping nothing does not win


def test_summary_weighs_every_query_alike() -> None:
    per_task = {"1": {"gold": ["a"], "queries": 1, "ceiling": {"1": 1.0, "3": 1.0}, "named": 1.0,
                      "recall_1": 1.0, "recall_3": 1.0, "precision_1": [1.0],
                      "precision_3": [0.5]},
                "2": {"gold": ["b"], "queries": 3, "ceiling": {"1": 0.0, "3": 1.0}, "named": 0.0,
                      "recall_1": 0.0, "recall_3": 1.0, "precision_1": [0.0, 0.0],
                      "precision_3": [1 / 3, 1 / 3, 1 / 3]}}
    got = tau.summary(per_task, 2, [1.0, 2.0])
    assert got["action_recall"] == {"1": 0.25, "3": 1.0}
    assert got["ceiling"] == {"1": 0.25, "3": 1.0} and got["best_available"] == 0.25
    assert got["named"] == 0.25
    assert got["precision"]["1"] == 1 / 3 and got["precision_queries"] == {"1": 3, "3": 4}
    assert got["queries"] == 4 and got["tasks_without_writes"] == 2
    assert got["per_task"]["1"]["precision"] == {"1": 1.0, "3": 0.5}


def test_partitions_are_every_grouping_once() -> None:
    from graphmem.bench import tau_scoring as score

    for n in range(7):
        items = [str(i) for i in range(n)]
        found = [sorted(sorted(g) for g in p) for p in score.partitions(items)]
        assert len(found) == score.bell(n) == [1, 1, 2, 5, 15, 52, 203][n]
        assert len({str(p) for p in found}) == len(found)  # no grouping twice
        assert all(sorted(i for g in p for i in g) == items for p in found)


def test_the_clustering_ceiling_ranges_from_one_group_per_task_to_one_per_kind() -> None:
    from graphmem.bench import tau_scoring as score

    def runs(task: str, kind: str, customer: str) -> list[dict[str, str]]:
        return [{"task": task, "kind": kind, "customer": customer}] * 3

    # tasks 1 and 2 share a kind but not a customer; tasks 1 and 5 share a customer
    truth = (runs("1", "cancel", "ann") + runs("2", "cancel", "bo") + runs("3", "book", "cy")
             + runs("4", "change", "dee") + runs("5", "bag", "ann"))
    got = score.clustering_ceiling(truth)
    assert got["groupings"] == 2  # tasks 1 and 2 apart or together; the others alone
    by_kind, by_task = got["front"]
    assert by_task["task"] == 1.0 and by_kind["kind"] == 1.0 and by_kind["task"] < 1.0
    assert round(by_task["kind"], 6) == round(by_task["customer"], 6)  # kind not above customer
    assert got["meeting"] == 1 and got["best_meeting"] == got["nearest"] == by_kind
    assert score.reach(by_kind) == by_kind["task"] / 0.7  # the smaller share of the two
    assert score.meets({"task": 0.7, "kind": 0.6, "customer": 0.5})
    assert not score.meets({"task": 0.9, "kind": 0.8, "customer": 0.85})  # customer above kind
    assert not score.meets({"task": 0.9, "kind": 0.5, "customer": 0.0})
    # one customer per kind: whatever groups the kinds groups the customers as much
    same = runs("1", "cancel", "ann") + runs("2", "cancel", "ann") + runs("3", "book", "bo")
    assert score.clustering_ceiling(same)["meeting"] == 0


def test_the_clustering_ceiling_is_not_computed_beyond_its_bound() -> None:
    from graphmem.bench import tau_scoring as score

    truth = [{"task": str(t), "kind": "k", "customer": str(t)} for t in range(12)]
    assert score.bell(12) > score.MAX_GROUPINGS
    assert score.clustering_ceiling(truth) == {"groupings": 0, "front": [], "meeting": 0,
                                               "best_meeting": None, "nearest": None}
