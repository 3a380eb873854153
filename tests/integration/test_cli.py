"""The CLI against the real store: ingest JSON lines, search, schema apply."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from graphmem.cli import app
from tests.integration.helpers import msg, owner


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
    assert r.exit_code == 1
    assert "line 2" in r.output


def test_schema_apply_and_status(env: None) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["schema", "apply"]).exit_code == 0
    r = runner.invoke(app, ["neo4j", "status"])
    assert r.exit_code == 0 and '"running": "True"' in r.output
