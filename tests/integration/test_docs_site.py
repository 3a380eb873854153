"""The documentation's examples against the real server (uvicorn on a free port, over the test
Neo4j, a fresh tenant): the README's walk-through runs as a doctest (its output must be the
one shown), the getting-started page's curl requests run as written and answer the shapes
shown, and the MCP page's Python example prints what the page says it prints."""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem.api.app import create_app
from graphmem.client import GraphMem
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.support.live_server import serve

ROOT = Path(__file__).resolve().parents[2]
KEY = f"gm_docs_{uuid.uuid4().hex[:12]}"
TENANT = f"t-docs-{uuid.uuid4().hex[:8]}"
OWNERS = ("sam", "kim")


@pytest.fixture(scope="module")
def server(settings: Settings, memory: Memory) -> Iterator[str]:
    """The API with one key for a fresh tenant; yields its base URL."""
    s = settings.model_copy(update={"api_keys": {hash_api_key(KEY): TENANT}})
    with serve(create_app(s, memory)) as url:
        yield url
    for owner in OWNERS:
        memory.for_tenant(TENANT).messages.forget_owner(owner)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def walk_through(readme: str) -> str:
    """The README's ``pycon`` blocks as one doctest: a blank line inside an expected output
    becomes ``<BLANKLINE>`` (doctest's spelling), one before a prompt stays a separator."""
    out: list[str] = []
    for block in _blocks(readme, "pycon"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            following = next((x for x in lines[i + 1:] if x.strip()), None)
            if line.strip() or following is None or following.startswith(">>>"):
                out.append(line)
            else:
                out.append("<BLANKLINE>")
        out.append("")
    return "\n".join(out)


def test_the_readme_walk_through_prints_what_it_shows(
        server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_URL", server)
    monkeypatch.setenv("GRAPHMEM_API_KEY", KEY)
    source = walk_through((ROOT / "README.md").read_text(encoding="utf-8"))
    test = doctest.DocTestParser().get_doctest(source, {}, "README walk-through", "README.md", 0)
    assert len(test.examples) >= 6, "the README's walk-through (```pycon blocks) is missing"
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()


def _json_values(text: str) -> list[Any]:
    """Every JSON value printed one after another (curl's outputs, with or without newlines)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_the_getting_started_requests_answer_as_shown(server: str) -> None:
    if shutil.which("curl") is None or shutil.which("bash") is None:
        pytest.skip("needs curl and bash to run the page's commands")
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    section = page.split("## First requests", 1)[1].split("\n## ", 1)[0]
    commands = [b for b in _blocks(section, "bash") if "curl" in b]
    shown = _blocks(section, "json")
    assert len(commands) == len(shown) == 4, "each request block is followed by its answer"
    host = server.removeprefix("http://")
    for command, answer in zip(commands, shown, strict=True):
        script = "\n".join(line for line in command.splitlines()
                           if not line.startswith("KEY="))  # the page's placeholder key
        script = script.replace("localhost:8000", host)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "KEY": KEY},
                              check=False)
        assert done.returncode == 0, done.stderr
        got = _json_values(done.stdout)
        assert got, f"no answer to:\n{command}"
        for value in got:
            problem = isinstance(value, dict) and value.get("status", 0) >= 400
            assert not problem, f"{command}\nanswered {value}"
        expected = set(re.findall(r'"(\w+)":', answer))
        assert expected <= _keys(got), f"keys shown but not answered: {expected - _keys(got)}"


def _kims_messages(server: str) -> None:
    with GraphMem(server, api_key=KEY) as gm:  # what getting-started stores (idempotent)
        gm.add_messages([
            {"id": "kim-1", "owner": "kim", "session_id": "s1", "speaker": "kim",
             "text": "I moved to Lisbon last month.", "timestamp": "2026-03-12T14:05:00+01:00"},
            {"id": "kim-2", "owner": "kim", "session_id": "s1", "speaker": "assistant",
             "role": "assistant", "text": "Nice! Do you like the tram there?",
             "timestamp": "2026-03-12T14:05:30+01:00"}])


def test_the_mcp_example_prints_what_the_page_shows(server: str) -> None:
    _kims_messages(server)
    page = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    code = _blocks(page, "python")[-1]
    printed = page.split(code, 1)[1]
    expected = _blocks(printed, "text")[0]
    code = code.replace("http://127.0.0.1:8000/mcp", f"{server}/mcp").replace('"gm_..."',
                                                                              repr(KEY))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/mcp.md", "exec"), {"__name__": "docs_mcp_example"})
    assert out.getvalue() == expected
