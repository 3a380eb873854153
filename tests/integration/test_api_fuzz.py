"""The API under a fuzzer: Schemathesis generates requests from the OpenAPI document (valid and
invalid ones, boundary values) against the real app over the real Neo4j, served by uvicorn on a
loopback port, with a valid key of a fresh tenant that is deleted at the end.

Every phase runs: the schema's examples, boundary values (coverage), generated requests, valid
and invalid ones (fuzzing, ``--mode all``), and sequences of calls that feed one answer's ids to
the next request (stateful, with the links Schemathesis infers from the schema and from answers).

Bounded: a fixed number of generated cases per operation and pass (`EXAMPLES`), a fixed seed,
no shrinking, and a time budget (`BUDGET_S`, Schemathesis's ``--max-time``: the boundary-value
phase gets each operation its share of it, then generated passes repeat until it is spent); a
fuzzer still running `GRACE_S` after the budget is stopped and the test fails. The app under
test has small size limits (`LIMITS`) so that generated texts of any size are refused or
embedded quickly; the real limits are tested in test_bad_input.py.

It must find no server error (5xx), no status the OpenAPI does not document, and no error that
is not an application/problem+json body with status, title and detail (checked by Schemathesis
against the documented `Problem` schema, and again on the server side by `Recorder`, which sees
every response the server sends).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.support.live_server import serve

EXAMPLES = 10  # per operation, in the fuzzing phase
LIMITS = {"max_batch": 5, "max_text_chars": 500}
SEED = 20261201
# seconds; a longer hunt: GRAPHMEM_FUZZ_BUDGET_S=600 pytest tests/integration/test_api_fuzz.py
BUDGET_S = int(os.environ.get("GRAPHMEM_FUZZ_BUDGET_S") or 45)
STATEFUL_S = int(os.environ.get("GRAPHMEM_FUZZ_STATEFUL_S") or 30)
GRACE_S = 60
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_schema_conformance")
CONFIG = """
# POST /v1/answer without an LLM configured: the documented 501 problem naming the settings
[[operations]]
include-path = "/v1/answer"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "501"]
"""


class Recorder:
    """Pure ASGI middleware: keeps (method, path, status, content type, body) of each error
    response the server sends."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.errors: list[dict[str, Any]] = []
        self.count = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seen: dict[str, Any] = {"method": scope["method"], "path": scope["path"], "body": b""}

        async def recording(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.count += 1
                seen["status"] = message["status"]
                headers = dict(message.get("headers", []))
                seen["type"] = headers.get(b"content-type", b"").decode()
            elif message["type"] == "http.response.body" and seen["status"] >= 400:
                seen["body"] += message.get("body", b"")
                if not message.get("more_body"):
                    self.errors.append(seen)
            await send(message)

        await self.app(scope, receive, recording)


@pytest.fixture
def fuzz_tenant(settings: Settings, cypher: Any) -> Iterator[str]:
    """A tenant of its own; afterwards its nodes are deleted, and no node outside a tenant may
    have been written."""
    tenant = f"fuzz-{uuid.uuid4().hex[:12]}"
    shared = "MATCH (n) WHERE n.tenant IS NULL RETURN count(n) AS n"
    before = cypher(shared)[0]["n"]
    yield tenant
    cypher("MATCH (n) WHERE n.tenant = $t DETACH DELETE n", t=tenant)
    assert cypher("MATCH (n) WHERE n.tenant = $t RETURN count(n) AS n", t=tenant)[0]["n"] == 0
    assert cypher(shared)[0]["n"] == before


def _fuzz(settings: Settings, memory: Memory, tenant: str, tmp_path: Path, phases: str,
          budget: int) -> tuple[str, Recorder]:
    """Schemathesis over the served app with ``phases`` for ``budget`` seconds: its report and
    what the server sent. Fails on a non-zero exit, a fuzzer over its time, or a server
    error, an undocumented status or an error that is not a problem body."""
    key = f"fuzz-key-{uuid.uuid4().hex}"
    s = settings.model_copy(update={"api_keys": {hash_api_key(key): tenant}, **LIMITS})
    recorder = Recorder(create_app(s, memory))
    started = time.monotonic()
    with serve(recorder, settings=s) as url:  # the server `graphmem serve` runs
        config = tmp_path / "schemathesis.toml"
        config.write_text(CONFIG, encoding="utf-8")
        command = [
            sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run",
            f"{url}/openapi.json",
            "--checks", CHECKS, "--phases", phases,
            "--mode", "all",  # positive and negative data
            "--max-examples", str(EXAMPLES), "--max-time", str(budget),
            "--seed", str(SEED), "--no-shrink",
            "--workers", "1", "--request-timeout", "30", "--suppress-health-check", "all",
            "--header", f"Authorization: Bearer {key}",
        ]
        env = {**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"}
        try:
            run = subprocess.run(command, capture_output=True, text=True, env=env,
                                 cwd=tmp_path, timeout=budget + GRACE_S)  # its cache goes there
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
            pytest.fail(f"the fuzzer ran over {budget + GRACE_S} s:\n{out}")
    elapsed = time.monotonic() - started
    # the failures come first (a request can be long): their start and the summary
    out = run.stdout
    report = (out if len(out) <= 20000 else out[:8000] + "\n[...]\n" + out[-12000:]) + \
        run.stderr[-5000:]
    print(f"fuzzer ({phases}): {recorder.count} responses in {elapsed:.0f} s\n{report}")
    assert run.returncode == 0, report

    bad = []
    for error in recorder.errors:
        body = _json(error["body"])
        server_error = error["status"] >= 500 and (error["path"], error["status"]) != (
            "/v1/answer", 501)  # no LLM configured: the documented problem
        if (server_error or error["type"] != "application/problem+json"
                or not isinstance(body, dict) or body.get("status") != error["status"]
                or not body.get("title") or not body.get("detail")):
            bad.append({**error, "body": error["body"][:300]})
    assert bad == [], bad[:10]
    return report, recorder


def test_the_fuzzer_finds_no_server_error_and_no_undocumented_response(
    settings: Settings, memory: Memory, fuzz_tenant: str, cypher: Any, tmp_path: Path,
) -> None:
    report, recorder = _fuzz(settings, memory, fuzz_tenant, tmp_path,
                             "examples,coverage,fuzzing", BUDGET_S)
    tested = re.search(r"Selected: (\d+)/\d+\s+Tested: (\d+)", report)
    assert tested and tested[1] == tested[2], f"not every operation was tested:\n{report}"
    assert recorder.count >= 100, report  # it really ran
    written = cypher("MATCH (n) WHERE n.tenant = $t RETURN count(n) AS n", t=fuzz_tenant)
    print(f"fuzzer wrote {written[0]['n']} nodes for its tenant (deleted after the test)")


def test_sequences_of_calls_find_no_server_error(
    settings: Settings, memory: Memory, fuzz_tenant: str, tmp_path: Path,
) -> None:
    """The stateful phase: an answer's ids (a stored message's, a run's, a fact's) feed the
    next request, along the links Schemathesis infers, so reads, forgetting and outcomes are
    tried on things that exist."""
    report, recorder = _fuzz(settings, memory, fuzz_tenant, tmp_path, "stateful", STATEFUL_S)
    scenarios = re.search(r"Scenarios:\s+(\d+)", report)
    assert scenarios and int(scenarios[1]) > 0, f"no sequence ran:\n{report}"
    assert recorder.count >= 20, report


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
