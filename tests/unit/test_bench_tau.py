"""The pure parts of the tau-bench benchmark (`graphmem.bench.tau`): what a run is scored on."""

from __future__ import annotations

from typing import Any

from graphmem.bench import tau


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
