"""The CLI against the real store: ingest JSON lines, search, schema apply."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.lifecycle.forget import id_hash
from graphmem.models import MessageIn
from graphmem.ops.worker import BackgroundWorkers, Worker
from graphmem.service import Memory
from tests.integration.helpers import msg, owner
from tests.unit.test_cli_basics import run_cli


def test_ingest_and_search(env: None, tmp_path: Path) -> None:
    who = owner()
    lines = [msg(0, who, text="I keep my passport in the blue drawer."),
             msg(1, who, text="Good to know!")]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in lines) + "\n")
    runner = CliRunner()
    r = runner.invoke(app, ["ingest", str(path), "--tenant", "cli"])
    assert r.exit_code == 0, r.output
    assert "2 messages read, 2 new" in r.output
    r = runner.invoke(app, ["ingest", str(path), "--tenant", "cli"])
    assert "0 new, 2 already stored" in r.output
    r = runner.invoke(app, ["search", "where is the passport", "--owner", who, "--tenant", "cli"])
    assert r.exit_code == 0 and "blue drawer" in r.output
    r = runner.invoke(app, ["search", "passport", "--owner", who, "--tenant", "cli", "--json"])
    assert json.loads(r.stdout)["hits"]


def test_ingest_reports_bad_line(env: None, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(msg(0, owner())) + "\n{not json\n")
    r = CliRunner().invoke(app, ["ingest", str(path)])
    assert r.exit_code == 2
    assert f"{path}:2: malformed JSON" in r.output


def test_ingest_runs_and_search_skills(env: None, tmp_path: Path) -> None:
    from tests.integration.test_procedural import shaped

    who, tenant = owner(), f"t-{uuid.uuid4().hex[:10]}"
    runs = [shaped(who, n, shape) for n, shape in enumerate(["anthropic", "responses", "gemini"])]
    bad = tmp_path / "bad.jsonl"
    broken = json.loads(json.dumps(runs[1]))
    broken["messages"][1]["name"] = ""
    bad.write_text(json.dumps(runs[0]) + "\n" + json.dumps(broken) + "\n")
    runner = CliRunner()
    r = runner.invoke(app, ["ingest", str(bad), "--format", "traces", "--tenant", tenant])
    assert r.exit_code == 2 and f"{bad}:2: messages[1].name: a tool call needs a name" in r.output
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(run) + "\n" for run in runs))
    r = runner.invoke(app, ["ingest", str(path), "--format", "traces", "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert "3 runs read, 3 new, 0 already stored" in r.output  # the bad file stored nothing
    assert runner.invoke(app, ["worker", "--once", "--tenant", tenant]).exit_code == 0
    r = runner.invoke(app, ["skills", "cancel my order", "--owner", who, "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert "## cancel_order (version 1" in r.output
    steps = next(line for line in r.output.splitlines() if line.startswith("steps: "))
    assert steps.startswith("steps: get_order(order_id: order id") and " -> cancel_order(" in steps
    r = runner.invoke(app, ["skills", "cancel", "--owner", who, "--tenant", tenant,
                            "--units", "cases", "--json"])
    assert len(json.loads(r.stdout)["cases"]) == 3
    r = runner.invoke(app, ["skills", "cancel", "--owner", who, "--tenant", "someone-else"])
    assert r.exit_code == 0 and "no skills for" in r.output
    r = runner.invoke(app, ["skills", "cancel", "--owner", who, "--k", "0"])
    assert r.exit_code == 2 and "--k" in r.output


def test_schema_apply_and_status(env: None) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["schema", "apply"]).exit_code == 0
    r = runner.invoke(app, ["neo4j", "status"])
    assert r.exit_code == 0
    status = json.loads(r.output)
    assert status["running"] is True and isinstance(status["pid"], int)


def test_schema_apply_loads_no_model(env: None, memory: Memory) -> None:
    """A fresh interpreter: the schema needs the model's name and dimensions, not the model."""
    code, out, err, loaded = run_cli("schema", "apply")
    assert code == 0, err
    assert "every index ONLINE" in out
    assert set(loaded) <= {"graphmem.embeddings"}  # describe(); no model library, no optimum
    assert memory.store.embedding_meta() is not None
    assert memory.store.embedding_meta()["model"] == memory.embedder.name  # type: ignore[index]


def test_forget_and_audit_via_cli(env: None, memory: Memory, tenant: str) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who)) for i in range(3)])
    runner = CliRunner()
    target = f"{who}-s1-1"
    r = runner.invoke(app, ["forget", "message", target, "--tenant", "someone-else"])
    assert r.exit_code == 1 and "no message" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["forget", "message", target], env={"GRAPHMEM_TENANT": tenant})
    assert r.exit_code == 0, r.output
    assert f"tenant: {tenant}" in r.stderr
    report = json.loads(r.stdout)
    assert report["removed"]["messages"] == 1 and report["removed"]["sentences"] >= 1
    assert "owner" not in report  # only a session's (or a filter's) report names an owner
    r = runner.invoke(app, ["forget", "message", target, "--tenant", tenant])
    assert r.exit_code == 0 and json.loads(r.stdout)["already_forgotten"]
    r = runner.invoke(app, ["audit", "deletions", "--tenant", tenant,
                            "-p", "from=2000-01-01T00:00:00Z", "-p", "to=2100-01-01T00:00:00Z"])
    assert r.exit_code == 0, r.output
    [row] = [json.loads(line) for line in r.stdout.splitlines()]
    assert row["kind"] == "message" and row["id_hash"] == id_hash(target)
    assert row["by"] == "cli"
    assert row["at"].endswith("Z") and "+00:00" not in r.stdout  # as the API writes times
    assert [m.id for m in memory.ops(tenant).session_messages("s1", who)] == [
        f"{who}-s1-0", f"{who}-s1-2"]
    r = runner.invoke(app, ["owners", "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert [json.loads(line)["owner"] for line in r.stdout.splitlines()] == [who]
    r = runner.invoke(app, ["sessions", "--owner", who, "--tenant", tenant])
    assert r.exit_code == 0, r.output
    [listed] = [json.loads(line) for line in r.stdout.splitlines()]
    assert (listed["session_id"], listed["message_count"]) == ("s1", 2)
    r = runner.invoke(app, ["forget", "session", "s1", "--tenant", tenant])
    assert r.exit_code == 2 and "--owner" in r.output  # a session id alone names no session
    assert "a session id is per owner" in r.output and "--owner OWNER" in r.output
    r = runner.invoke(app, ["forget", "message", target, "--owner", who, "--tenant", tenant])
    assert r.exit_code == 2 and "--owner" in r.output
    r = runner.invoke(app, ["forget", "session", "s1", "--owner", who, "--tenant", tenant])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert (report["kind"], report["owner"], report["removed"]["messages"]) == ("session", who, 2)
    assert memory.ops(tenant).session_messages("s1", who) == []
    r = runner.invoke(app, ["sessions", "--owner", who, "--tenant", tenant])
    assert r.exit_code == 0 and r.stdout == ""


def test_forget_messages_and_search_by_metadata_via_cli(env: None, memory: Memory,
                                                         tenant: str) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(
        i, who, text=f"note {i} on the glacier hike", metadata={"n": i % 3})) for i in range(6)])
    runner = CliRunner()
    r = runner.invoke(app, ["search", "glacier hike", "--owner", who, "--meta", "n=1",
                            "--json", "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert {h["metadata"]["n"] for h in json.loads(r.stdout)["hits"]} == {1}
    r = runner.invoke(app, ["forget-messages", "--owner", who, "--tenant", tenant])
    assert r.exit_code == 2 and "metadata" in r.output  # at least one filter
    r = runner.invoke(app, ["forget-messages", "--owner", who, "--meta", "n=1", "--meta", "n=2",
                            "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["removed"]["messages"] == 4
    assert [m.id for m in memory.ops(tenant).session_messages("s1", who)] == [
        f"{who}-s1-0", f"{who}-s1-3"]


def test_export_an_owner_via_cli(env: None, memory: Memory, tenant: str,
                                 tmp_path: Path) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, metadata={"n": i}))
                           for i in range(3)])
    runner = CliRunner()
    r = runner.invoke(app, ["export", "--owner", who, "--tenant", tenant])
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    messages = [x for x in lines if x["kind"] == "message"]
    assert [x["properties"]["metadata"] for x in messages] == [{"n": 0}, {"n": 1}, {"n": 2}]
    out = tmp_path / "export.jsonl"
    r = runner.invoke(app, ["export", "--owner", who, "--tenant", tenant, "--out", str(out)])
    assert r.exit_code == 0 and f"{len(lines)} records" in r.stderr
    assert [json.loads(x) for x in out.read_text().splitlines()] == lines
    r = runner.invoke(app, ["export", "--owner", owner(), "--tenant", tenant])
    assert r.exit_code == 1 and "nothing stored" in r.stderr


def test_retry_extraction_via_cli(env: None, memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who)) for i in range(2)])
    runner = CliRunner()
    r = runner.invoke(app, ["retry-extraction", "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"episodes": [], "jobs": []}
    assert Worker(memory, tenant=tenant).run_once()  # forms the session's episode
    cypher("MATCH (e:Episode {tenant: $t}) SET e.extraction_status = 'all_dropped'", t=tenant)
    r = runner.invoke(app, ["retry-extraction", "--tenant", tenant, "--owner", who])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [e["session_id"] for e in out["episodes"]] == ["s1"] and len(out["jobs"]) == 1
    assert memory.jobs.get(tenant, out["jobs"][0]).state == "pending"
    r = runner.invoke(app, ["retry-extraction", "--status", "bogus"])
    assert r.exit_code == 2


def test_worker_for_one_tenant(env: None, memory: Memory) -> None:
    mine, theirs = f"t-{uuid.uuid4().hex[:10]}", f"t-{uuid.uuid4().hex[:10]}"
    for t in (mine, theirs):
        who = owner()
        memory.ops(t).ingest_messages([MessageIn.model_validate(msg(i, who)) for i in range(2)])
    r = CliRunner().invoke(app, ["worker", "--once", "--tenant", mine])
    assert r.exit_code == 0, r.output
    assert memory.jobs.counts(mine).get("done") == 1
    assert memory.jobs.counts(theirs).get("pending") == 1
    workers = BackgroundWorkers(memory, tenant=theirs).start()
    try:
        deadline = time.monotonic() + 60
        while memory.jobs.counts(theirs).get("done") != 1 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        workers.stop()
    assert not workers.running and workers.ran == 1
