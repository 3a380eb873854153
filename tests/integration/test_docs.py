"""The API's documentation: every operation of the OpenAPI document is described, has its error
responses as problem+json and an example request body that the server accepts; ``/docs`` and
``/redoc`` work offline (no CDN: their files come from the app), and, where Chromium is
installed, ``/docs`` renders its operation list in a headless browser that can reach nothing
but this machine. Also: the sample JSON lines the README points at ingest with `graphmem ingest`.

Only the last test needs Neo4j; the others build the app without starting it.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from graphmem.api.app import create_app
from graphmem.api.openapi import METHODS, PROBLEM_REF
from graphmem.api.problems import PROBLEM
from graphmem.cli import app as cli_app
from graphmem.config import Settings

CHROMIUM = shutil.which("chromium")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MODEL_MODULES = ("graphmem.wire", "graphmem.models", "graphmem.facts.models",
                 "graphmem.procedural.models")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    document: dict[str, Any] = create_app(Settings()).openapi()
    return document


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    yield TestClient(create_app(Settings()))  # no lifespan: /docs needs no Neo4j


def _operations(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method, path, operation


def _model(name: str) -> type[BaseModel] | None:
    for module in MODEL_MODULES:
        found = getattr(importlib.import_module(module), name, None)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return None


def _example_problems(body: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    """Why this JSON request body's example is missing or refused by its model ([] if fine)."""
    media = body.get("content", {}).get("application/json")
    if media is None:
        return ["no application/json request body"]
    schema = media["schema"]
    members = [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]
    refs = [s["$ref"] for s in members if "$ref" in s]
    names = [r.rsplit("/", 1)[1] for r in refs] or (
        [schema["title"]] if "title" in schema else [])  # a model's schema given inline
    examples = [media["example"]] if "example" in media else [
        e["value"] for e in media.get("examples", {}).values()]
    for name in names:
        examples += schemas.get(name, {}).get("examples", [])
    if not examples:
        return ["no example request body (api/examples.py)"]
    models = [m for m in map(_model, names) if m is not None]
    if not models:
        return [f"no model named {names} in {', '.join(MODEL_MODULES)}"]
    out = []
    for example in examples:
        errors = []
        for model in models:
            try:
                model.model_validate_json(json.dumps(example))
                break
            except ValidationError as exc:
                errors.append(str(exc).splitlines()[0])
        else:
            out.append(f"example refused: {errors}")
    return out


def _operation_problems(method: str, path: str, op: dict[str, Any],
                        schemas: dict[str, Any]) -> list[str]:
    out = []
    if not (op.get("description") or "").strip():
        out.append("no description (a docstring on the route function)")
    responses = op.get("responses", {})
    needed = {500}
    if path.startswith("/v1/"):
        needed |= {401, 503}
        if {"bearer": []} not in op.get("security", []):
            out.append("no bearer security")
    if "requestBody" in op:
        needed |= {400, 413, 415, 422}
        out += _example_problems(op["requestBody"], schemas)
    params = op.get("parameters", [])
    if params:
        needed.add(422)
    if any(p.get("in") == "path" for p in params):
        needed.add(404)
    missing = sorted(s for s in needed if str(s) not in responses)
    if missing:
        out.append(f"error responses not documented: {missing}")
    for status, response in responses.items():
        if status.isdigit() and int(status) >= 400:
            content = response.get("content", {})
            if content.get(PROBLEM, {}).get("schema") != PROBLEM_REF:
                out.append(f"{status} is not {PROBLEM}")
    return out


def test_every_operation_is_documented(schema: dict[str, Any]) -> None:
    schemas = schema["components"]["schemas"]
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert "Problem" in schemas
    failures = [f"{method.upper()} {path}: {problem}"
                for method, path, op in _operations(schema)
                for problem in _operation_problems(method, path, op, schemas)]
    assert failures == [], "\n".join(failures)


def test_every_body_operation_has_an_example_in_the_document(schema: dict[str, Any]) -> None:
    bodies = [(m, p) for m, p, op in _operations(schema) if "requestBody" in op]
    assert ("post", "/v1/messages") in bodies and len(bodies) >= 5
    message = schema["paths"]["/v1/messages"]["post"]["requestBody"]["content"]
    assert message["application/json"]["example"]["messages"][0]["owner"] == "alice"


# --- the pages --------------------------------------------------------------------------------
REFERENCE = re.compile(r"""(?:src|href)=["']([^"']+)["']""")
SPEC_URL = re.compile(r"""(?:url: ?|spec-url=)["']([^"']+)["']""")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_everything_from_the_app(client: TestClient, page: str) -> None:
    r = client.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "http://" not in r.text and "https://" not in r.text and "//cdn" not in r.text
    refs = REFERENCE.findall(r.text)
    scripts = [u for u in refs if u.endswith(".js")]
    assert scripts, f"no script on {page}"
    for url in refs:
        assert url.startswith("/"), f"{url} is not served by the app"
        got = client.get(url)
        assert got.status_code == 200, url
        if url.endswith(".js"):
            assert "javascript" in got.headers["content-type"] and len(got.content) > 500_000
        elif url.endswith(".css"):
            assert got.headers["content-type"].startswith("text/css")
    spec_url = SPEC_URL.findall(r.text)
    assert spec_url == ["/openapi.json"]
    assert client.get(spec_url[0]).json()["paths"]


@pytest.fixture(scope="module")
def served_docs() -> Iterator[str]:
    """The app on a free loopback port (no lifespan: the pages need no Neo4j)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(Settings()), lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the app did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def _chromium(url: str, *extra: str) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--hide-scrollbars", "--user-data-dir=" + str(Path(extra[0]).parent / "profile"),
         # offline: every host name but this machine's is unresolvable
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
         "--virtual-time-budget=20000", *extra[1:], url],
        capture_output=True, timeout=180, check=False,
    )


def test_docs_render_offline_in_headless_chromium(
    served_docs: str, schema: dict[str, Any], tmp_path: Path
) -> None:
    if CHROMIUM is None:
        pytest.skip("needs Chromium (apt-get install chromium) to render /docs")
    done = _chromium(f"{served_docs}/docs", str(tmp_path / "dom"), "--dump-dom")
    dom = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, done.stderr[-2000:]
    shown = set(re.findall(r'opblock-summary-path"[^>]*data-path="([^"]+)"', dom))
    assert shown == set(schema["paths"]), f"operations not listed: {set(schema['paths']) - shown}"
    png = tmp_path / "docs.png"
    done = _chromium(f"{served_docs}/docs", str(png), "--window-size=1280,1400",
                     f"--screenshot={png}")
    assert done.returncode == 0, done.stderr[-2000:]
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 30_000, "no real screenshot"


# --- the README's sample ----------------------------------------------------------------------
def test_sample_jsonl_ingests(env: None) -> None:
    sample = Path(str(resources.files("graphmem.demo") / "sample.jsonl"))
    lines = sample.read_text(encoding="utf-8").splitlines()
    tenant = f"sample-{time.time_ns()}"
    r = CliRunner().invoke(cli_app, ["ingest", str(sample), "--tenant", tenant])
    assert r.exit_code == 0, r.output
    assert f"{len(lines)} messages read, {len(lines)} new" in r.output
    r = CliRunner().invoke(cli_app, ["search", "what hurts when bob runs?", "--owner", "bob",
                                     "--tenant", tenant])
    assert r.exit_code == 0 and "knee" in r.output
