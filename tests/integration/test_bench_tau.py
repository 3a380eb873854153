"""`graphmem bench tau` end to end on a small synthetic tau-bench file: transfer (skills formed
from the train tasks only, the test tasks' first messages as queries) and leave-one-task-out,
the JSON keys the figures are read from, and nothing left behind in Neo4j."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphmem.cli import app

CUSTOMERS = [("mia_li_3668", "ABC123"), ("omar_rossi_1241", "XY9ZZ1"),
             ("yara_garcia_1905", "HXDUBJ"), ("ivan_muller_7015", "K4B2QP")]
ASKS = {"cancel_reservation": "Hi, I'm {user}. Please cancel my reservation {booking}.",
        "update_reservation_baggages": "Hello, {user} here: add a checked bag to {booking}."}


def _run(task: int, trial: int, write: str, user: str, booking: str) -> dict[str, Any]:
    """One run of a task that looks the user and the booking up, then makes ``write``."""
    traj: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": ASKS[write].format(user=user, booking=booking)}]
    for n, (tool, args) in enumerate([("get_user_details", {"user_id": user}),
                                      ("get_reservation_details", {"reservation_id": booking}),
                                      (write, {"reservation_id": booking})]):
        traj += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"c{n}", "type": "function",
                      "function": {"name": tool, "arguments": json.dumps(args)}}]},
                 {"role": "tool", "tool_call_id": f"c{n}", "name": tool, "content": "{}"}]
    traj.append({"role": "assistant", "content": "Done."})
    actions = [{"name": "get_reservation_details", "kwargs": {}}, {"name": write, "kwargs": {}}]
    return {"task_id": task, "trial": trial, "reward": 1.0 if trial < 2 else 0.0, "traj": traj,
            "info": {"task": {"user_id": user, "actions": actions}}}


def _tau_file(path: Path) -> Path:
    """Eight tasks, three trials each (two solved): cancellations and baggage changes, each
    customer asking for both, so a clustering by customer is visible in the ARI."""
    runs = [_run(task, trial, write, *CUSTOMERS[task // 2])
            for task, write in enumerate(["cancel_reservation", "update_reservation_baggages"] * 4)
            for trial in range(3)]
    path.write_text(json.dumps(runs), encoding="utf-8")
    return path


def _figures(args: list[str], out: Path) -> dict[str, Any]:
    r = CliRunner().invoke(app, ["bench", "tau", *args, "--json", str(out)])
    assert r.exit_code == 0, r.output
    fig: dict[str, Any] = json.loads(out.read_text())
    return fig


def test_bench_tau_transfer_and_leave_one_task_out(env: None, tmp_path: Path,
                                                   cypher: Any) -> None:
    data = str(_tau_file(tmp_path / "tau.json"))
    fig = _figures(["--train", data, "--train-tasks", "0-3", "--data", data, "--tasks", "4-7"],
                   tmp_path / "transfer.json")
    assert fig["mode"] == "transfer" and fig["train_runs"] == fig["runs"] == 12
    assert fig["skills_formed"] == 2  # one per kind, not one per customer
    ari = fig["clustering"]["ari"]
    assert {"task", "kind", "customer"} <= set(ari)
    assert ari["kind"] == 1.0 and ari["kind"] > ari["customer"]  # by what was done
    ceiling = fig["clustering"]["ceiling"]
    assert ceiling["groupings"] == 4  # two kinds of two tasks: each pair apart or together
    assert ceiling["front"][0]["kind"] == ceiling["front"][-1]["task"] == 1.0
    got = fig["retrieval"]
    assert got["action_recall"] == {"1": 1.0, "3": 1.0}  # every request names its write
    assert got["precision"]["1"] == 1.0 and 0.0 < got["precision"]["3"] <= 1.0
    assert got["ceiling"] == {"1": 1.0, "3": 1.0} and got["queries"] == 12
    loto = _figures(["--data", data], tmp_path / "loto.json")
    assert loto["mode"] == "leave-one-task-out" and loto["retrieval"]["tasks"] == 8
    assert {"1", "3"} == set(loto["retrieval"]["action_recall"]) == set(
        loto["retrieval"]["precision"])
    for tenant in (fig["tenant"], loto["tenant"]):
        left = cypher("MATCH (n) WHERE n.tenant = $t RETURN count(n) AS n", t=tenant)
        assert left == [{"n": 0}]  # every owner written is forgotten
