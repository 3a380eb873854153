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
