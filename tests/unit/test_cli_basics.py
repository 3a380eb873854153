"""The `graphmem` command without services: one-line errors (never a traceback), the tenant
option, `graphmem key`, and commands that must not load the embedding model (subprocesses, so
the check sees exactly what one command imports)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.config import hash_api_key, key_id

MODEL_MODULES = ("sentence_transformers", "torch", "onnxruntime", "transformers", "optimum")
"""Loading the embedding model imports these; `graphmem.embeddings` itself is light (a
command opening `Memory` with a lazy model imports it and loads nothing)."""


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port  # closed again: nothing listens there


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, list[str]]:
    """Run one command in a fresh interpreter; returns exit code, stdout, stderr and which model
    modules it imported."""
    code = (
        "import sys\n"
        "from graphmem.cli import main\n"
        f"sys.argv = ['graphmem', *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "else:\n"
        "    code = 0\n"
        f"loaded = [m for m in {MODEL_MODULES!r} if m in sys.modules]\n"
        "print('LOADED=' + ','.join(loaded), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, timeout=120,
                          check=False)
    err, _, loaded = proc.stderr.rpartition("LOADED=")
    return proc.returncode, proc.stdout, err, [m for m in loaded.strip().split(",") if m]


def test_key_prints_an_export_line_keeping_the_environments_keys() -> None:
    old = {hash_api_key("old-key"): "acme"}
    code, out, err, loaded = run_cli("key", "team/b", env={"GRAPHMEM_API_KEYS": json.dumps(old)})
    assert code == 0, err
    assert loaded == []
    [line] = out.strip().splitlines()
    assert line.startswith("export GRAPHMEM_API_KEYS='")
    keys = json.loads(line.split("=", 1)[1].strip("'"))
    assert keys[hash_api_key("old-key")] == "acme" and len(keys) == 2
    key = err.split("key for tenant 'team/b': ", 1)[1].split()[0]
    assert keys[hash_api_key(key)] == "team/b"
    assert "restart" in err


def test_key_for_some_owners_read_only() -> None:
    old = {hash_api_key("old-key"): {"tenant": "acme", "owners": ["carol"]}}
    code, out, err, _ = run_cli("key", "acme", "--owner", "bob", "--owner", "alice",
                                "--read-only", env={"GRAPHMEM_API_KEYS": json.dumps(old)})
    assert code == 0, err
    keys = json.loads(out.strip().split("=", 1)[1].strip("'"))
    assert keys[hash_api_key("old-key")] == {"tenant": "acme", "owners": ["carol"]}
    key = err.split("(owners alice, bob; read-only): ", 1)[1].split()[0]
    assert keys[hash_api_key(key)] == {"tenant": "acme", "owners": ["alice", "bob"],
                                       "read_only": True}


def test_key_refuses_a_malformed_environment() -> None:
    r = CliRunner().invoke(app, ["key", "x"], env={"GRAPHMEM_API_KEYS": "{nope"})
    assert r.exit_code == 1 and "GRAPHMEM_API_KEYS: not JSON" in r.output
    bad = json.dumps({hash_api_key("k"): {"tenant": "x", "owners": []}})
    r = CliRunner().invoke(app, ["key", "x"], env={"GRAPHMEM_API_KEYS": bad})
    assert r.exit_code == 1 and "GRAPHMEM_API_KEYS: key 1: owners:" in r.output


def flat(text: str) -> str:
    """Console output with its wrapping undone."""
    return " ".join(text.split())


def test_key_into_a_keys_file_and_revoked(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    runner = CliRunner()
    made = runner.invoke(app, ["key", "acme", "--owner", "alice", "--rate-limit", "2.5",
                               "--file", str(path)], env={"GRAPHMEM_API_KEYS_FILE": None})
    assert made.exit_code == 0, made.output
    key = flat(made.output).split("(owners alice; 2.5 requests/s): ", 1)[1].split()[0]
    assert json.loads(path.read_text()) == {
        hash_api_key(key): {"tenant": "acme", "owners": ["alice"], "rate_limit": 2.5}}
    assert path.stat().st_mode & 0o777 == 0o600
    again = runner.invoke(app, ["key", "acme"], env={"GRAPHMEM_API_KEYS_FILE": str(path)})
    assert again.exit_code == 0 and "export GRAPHMEM_API_KEYS" not in flat(again.output)
    other = flat(again.output).split("key for tenant 'acme': ", 1)[1].split()[0]
    assert set(json.loads(path.read_text())) == {hash_api_key(key), hash_api_key(other)}
    gone = runner.invoke(app, ["revoke-key", key, "--file", str(path)])
    assert gone.exit_code == 0 and "1 key(s) left" in flat(gone.output)
    assert f"its id (in the request log; enough to revoke it): {key_id(other)}" \
        in flat(again.output)
    by_id = runner.invoke(app, ["revoke-key", key_id(other), "--file", str(path)])
    assert by_id.exit_code == 0 and json.loads(path.read_text()) == {}
    unknown = runner.invoke(app, ["revoke-key", key, "--file", str(path)])
    assert unknown.exit_code == 1 and "no such key" in flat(unknown.output)
    path.write_text("{broken")
    refused = runner.invoke(app, ["key", "acme", "--file", str(path)])
    assert refused.exit_code == 1 and "nothing written" in flat(refused.output)
    assert path.read_text() == "{broken"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


@pytest.mark.parametrize("args", [["neo4j", "status"], ["llm", "status"], ["audit"],
                                  ["forget", "--help"]])
def test_commands_without_a_model_do_not_load_it(args: list[str]) -> None:
    code, _, err, loaded = run_cli(*args)
    assert code in (0, 3), err
    assert loaded == []


def test_neo4j_status_is_typed_json(tmp_path: Path) -> None:
    """No server in this instance dir: exit 3, and the JSON says false and null, not strings."""
    env = {"GRAPHMEM_NEO4J_INSTANCE_DIR": str(tmp_path / "none")}
    code, out, err, _ = run_cli("neo4j", "status", env=env)
    assert code == 3, err
    status = json.loads(out)
    assert status["running"] is False and status["pid"] is None and status["version"] is None
    assert status["instance_dir"] == str(tmp_path / "none")


def test_brackets_are_text_in_help_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """Rich markup must not eat `[plot]` from an install hint, nor choke on `[/x]` in an error."""
    r = CliRunner().invoke(app, ["bench", "locomo", "--help"], env={"COLUMNS": "200"})
    assert "graphmem[plot]" in r.output and "graphmem[peer]" in r.output
    from graphmem.cli.common import fail

    fail(ValueError("pip install 'graphmem[plot]' [/x]"))
    assert "pip install 'graphmem[plot]' [/x]" in capsys.readouterr().err


def test_help_reads_as_sentences_with_types_a_user_can_read() -> None:
    """Paragraphs reflowed to the terminal (not broken where the docstring's lines end); a flag
    shows no type, a repeatable option its item type; every serving option says what it is; the
    Neo4j help names the versions it runs."""
    from graphmem.config import NEO4J_VERSION, NEO4J_VERSION_2026

    env = {"COLUMNS": "200"}
    top = CliRunner().invoke(app, ["--help"], env=env).output
    assert "With a keys file, adds it there" in top
    for args in (["--help"], ["serve", "--help"], ["mcp", "--help"], ["search", "--help"],
                 ["forget-messages", "--help"], ["bench", "locomo", "--help"]):
        out = CliRunner().invoke(app, args, env=env).output
        assert "<bool>" not in out and "<list[" not in out, args
    serve = CliRunner().invoke(app, ["serve", "--help"], env=env).output
    assert "Address to listen on" in serve and "Port to listen on" in serve
    assert "--tenant" in serve and "every tenant" in serve
    assert "<str>..." in CliRunner().invoke(app, ["forget-messages", "--help"], env=env).output
    mcp = CliRunner().invoke(app, ["mcp", "--help"], env=env).output
    assert "transport http: address to listen on" in mcp and "port to listen on" in mcp
    neo4j = CliRunner().invoke(app, ["neo4j", "--help"], env=env).output
    assert NEO4J_VERSION_2026 in neo4j and NEO4J_VERSION in neo4j


def test_serve_tenant_goes_with_worker() -> None:
    r = CliRunner().invoke(app, ["serve", "--tenant", "acme"])
    assert r.exit_code == 2 and "--worker" in r.output


def test_neo4j_down_is_one_line_without_traceback_or_model() -> None:
    env = {"GRAPHMEM_NEO4J_BOLT_PORT": str(_dead_port()), "GRAPHMEM_NEO4J_PASSWORD": "x"}
    code, out, err, loaded = run_cli("forget", "message", "m1", env=env)
    assert code == 1
    assert "Traceback" not in err and "error:" in err and "Neo4j" in err
    assert loaded == [] and out == ""
    code, _, err, _ = run_cli("audit", "deletions", "-p", "from=2020-01-01T00:00:00Z",
                              "-p", "to=2030-01-01T00:00:00Z", env=env)
    assert code == 1 and "Traceback" not in err and "Neo4j" in err
    for args in (("sessions", "--owner", "alice"), ("owners",)):
        code, out, err, loaded = run_cli(*args, env=env)
        assert code == 1 and "Traceback" not in err and "Neo4j" in err, args
        assert loaded == [] and out == "", args


def test_bad_input_is_a_usage_error(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["search", "q", "--owner", "a", "--method", "bogus"])
    assert r.exit_code == 2 and "--method" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["ingest", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = runner.invoke(app, ["ingest", str(tmp_path), "--format", "csv"])
    assert r.exit_code == 2
    r = runner.invoke(app, ["forget", "note", "x"])
    assert r.exit_code == 2
    r = runner.invoke(app, ["bench", "ranker", "--data", "x.json", "--out", "r.json",
                            "--method", "vector"])
    assert r.exit_code == 2 and "--method" in r.output
    r = runner.invoke(app, ["bench", "ranker", "--data", "x.json", "--out", "r.json",
                            "--preset", "deeper"])
    assert r.exit_code == 2 and "--preset" in r.output
    r = runner.invoke(app, ["audit", "x", "-p", "novalue"])
    assert r.exit_code == 2 and "NAME=VALUE" in r.output
    r = runner.invoke(app, ["schema", "sparse"], env={"GRAPHMEM_SPARSE": "off"})
    assert r.exit_code == 2 and "GRAPHMEM_SPARSE" in r.output


def test_the_tenant_is_checked_and_echoed(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["search", "q", "--owner", "a", "--tenant", "bad\x01name"])
    assert r.exit_code == 2 and "tenant" in r.output
    r = runner.invoke(app, ["search", "q", "--owner", "a", "--tenant", "x" * 201])
    assert r.exit_code == 2
    r = runner.invoke(app, ["key", ""])
    assert r.exit_code == 2
    # from the environment; echoed (stderr) when it is not "default"
    r = runner.invoke(app, ["search", "q", "--owner", "a", "--method", "bogus"],
                      env={"GRAPHMEM_TENANT": "acme"})
    assert "tenant: acme" in r.output
    r = runner.invoke(app, ["search", "q", "--owner", "a", "--method", "bogus"],
                      env={"GRAPHMEM_TENANT": "default"})
    assert "tenant:" not in r.output


@pytest.mark.parametrize(("content", "line", "reason"), [
    (b'{"owner": "a", "session_id": "s", "speaker": "a", "text": "hi", '
     b'"timestamp": "2024-01-01T00:00:00Z"}\n\n{not json\n', 3, "malformed JSON"),
    (b'{"owner": "a", "session_id": "s", "speaker": "a", "text": "hi", '
     b'"timestamp": "2024-01-01T00:00:00"}\n', 1, "timestamp"),
    (b'{"owner": "a"}\n\xff\xfe\n', 1, "session_id"),
    (b'\n\xff\xfe\n', 2, "not UTF-8"),
])
def test_ingest_reports_a_bad_line_before_connecting(
    tmp_path: Path, content: bytes, line: int, reason: str
) -> None:
    """FILE:LINE: reason, exit 2, with Neo4j unreachable and no model loaded: the file is
    checked first."""
    path = tmp_path / "m.jsonl"
    path.write_bytes(content)
    env = {"GRAPHMEM_NEO4J_BOLT_PORT": str(_dead_port()), "GRAPHMEM_NEO4J_PASSWORD": "x"}
    code, out, err, loaded = run_cli("ingest", str(path), env=env)
    assert code == 2, err
    [first] = [ln for ln in err.splitlines() if ln.strip()]
    assert first.startswith(f"{path}:{line}: ") and reason in first, first
    assert "Neo4j" not in err and "Traceback" not in err and out == ""
    assert loaded == []
