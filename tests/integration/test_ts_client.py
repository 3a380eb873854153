"""The TypeScript client (api/typescript): its body types are generated from this server's
OpenAPI document with openapi-typescript, it compiles with tsc, it has a method for every
operation, and a small script runs against the real server (add messages, read, search, a 404
and a 422). Needs Node 18+ and npm; the packages (openapi-typescript, typescript) are installed
from package-lock.json into api/typescript/node_modules on the first run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem.api.app import create_app
from graphmem.client.calls import NOT_COVERED
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.support.live_server import serve

from .helpers import owner as new_owner

PACKAGE = Path(__file__).resolve().parents[2] / "api" / "typescript"
KEY = "ts-key"
TENANT = f"t-ts-{uuid.uuid4().hex[:8]}"
NODE, NPM = shutil.which("node"), shutil.which("npm")
pytestmark = pytest.mark.skipif(NODE is None or NPM is None,
                                reason="Node.js and npm are not installed")


def sh(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    done = subprocess.run(list(args), cwd=PACKAGE, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built(settings: Settings, memory: Memory) -> Iterator[str]:
    """The package built against this server's OpenAPI; yields the live server's URL."""
    s = settings.model_copy(update={"api_keys": {hash_api_key(KEY): TENANT}})
    app = create_app(s, memory)
    (PACKAGE / "openapi.json").write_text(json.dumps(app.openapi(), indent=1, sort_keys=True))
    if not (PACKAGE / "node_modules" / ".package-lock.json").exists():
        sh("npm", "ci", "--no-audit", "--no-fund")
    sh("npm", "run", "generate")
    sh("npm", "run", "build")
    with serve(app) as url:
        yield url


def test_every_operation_has_a_method(built: str) -> None:
    source = (PACKAGE / "src" / "index.ts").read_text()
    found = {(m, re.sub(r"\$\{id\(\w+\)\}", "{}", p))
             for m, p in re.findall(r'method: "(\w+)", path: [`"]([^`"]+)[`"]', source)}
    paths = json.loads((PACKAGE / "openapi.json").read_text())["paths"]
    wanted = {(m.upper(), re.sub(r"\{\w+\}", "{}", p)) for p, item in paths.items()
              for m in item if (m.upper(), p) not in NOT_COVERED}
    assert found == wanted


def test_the_compiled_client_against_the_server(built: str) -> None:
    o = new_owner()
    out = sh("node", "dist/test/smoke.js", timeout=60,
             env={"GRAPHMEM_URL": built, "GRAPHMEM_API_KEY": KEY, "GRAPHMEM_OWNER": o})
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["created"] == 3 and seen["duplicates"] == 1
    assert seen["session"] == [f"{o}/m0", f"{o}/m1", f"{o}/m2"]
    assert f"{o}/m0" in seen["hits"]
    assert seen["utc"] == "2024-05-08T11:52:00Z"
    assert seen["notFound"] == {"status": 404, "title": "not found"}
    assert seen["invalid"] == {"status": 422, "field": "messages[0].timestamp"}
    assert seen["sessions"] == [["aside", 1], ["s/1", 3]]
    assert seen["listed"] is True
    assert seen["filtered"] == [[f"{o}/m2", "travel"]]
    assert seen["forgotTravel"] == ["messages", 1]  # m2 (m3, travel too, went with its session)
    assert seen["deleted"] == 2
    assert seen["forgot"] == ["session", 1]
    assert seen["exported"] == [f"message:{o}/m{i}" for i in range(4)]  # pages of 2, id order
