"""The wheel: built from a copy of the sources (offline: ``pip wheel --no-build-isolation``), it
holds every Cypher file, the re-ranking's weights, the API as ``graphmem.api`` (no top-level
``api``) and the ``py.typed`` marker, and names the entry point; installed without extras into a
fresh virtualenv (its few dependencies come from the package index), the client imports, the
Cypher files load from the installed package, none of the server's dependencies is there, a
server command says how to install them, and a consumer's code using the client type-checks
with ``mypy --strict`` against the installed package (and a wrong keyword type fails it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("graphmem", "api", "cypher", "pyproject.toml", "setup.py", "README.md")
SERVER_ONLY = ("neo4j", "fastapi", "uvicorn", "sentence_transformers", "torch", "openai",
               "networkx", "dateparser", "prometheus_client")


def _files(folder: str, pattern: str) -> list[str]:
    return sorted(p.relative_to(ROOT / folder).as_posix() for p in (ROOT / folder).rglob(pattern)
                  if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy, so no stale build/ folder of the checkout can leak into it."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(work / "dist"), str(src)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = (work / "dist").glob("graphmem-*.whl")
    return built


def test_wheel_holds_the_package_the_cypher_files_and_the_entry_point(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    read = zipfile.ZipFile(wheel).read
    assert {n.split("/")[0] for n in names} == {"graphmem", info}, "only graphmem at the top"
    assert read(f"{info}/top_level.txt").decode().split() == ["graphmem"]
    missing = [f for f in _files("cypher", "*") if (ROOT / "cypher" / f).is_file()
               and f"graphmem/cypher_files/{f}" not in names]
    assert missing == [], "Cypher files not in the wheel (pyproject.toml package-data)"
    assert [f for f in _files("api", "*.py") if f"graphmem/api/{f}" not in names] == []
    assert [f for f in _files("graphmem", "*.py") if f"graphmem/{f}" not in names] == []
    demo = {f"graphmem/demo/{f}" for f in ("demo_messages.jsonl", "demo_facts.json",
                                            "sample.jsonl")}
    assert demo <= names
    rankers = {f"graphmem/retrieval/rankers/{f}" for f in _files("graphmem/retrieval/rankers",
                                                                 "*.json")}
    assert rankers and rankers <= names, "the learned re-ranking's weights (package-data)"
    assert "graphmem/py.typed" in names, "the PEP 561 marker (pyproject.toml package-data)"
    entry_points = read(f"{info}/entry_points.txt").decode()
    assert "graphmem = graphmem.cli:main" in entry_points
    metadata = read(f"{info}/METADATA").decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    base = [r for r in requires if "extra ==" not in r]
    assert not [r for r in base if any(m.replace("_", "-") in r for m in SERVER_ONLY)], base
    assert any(r.startswith("Requires-Dist: neo4j") and 'extra == "server"' in r
               for r in requires)


@pytest.fixture(scope="module")
def client_env(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv with the wheel installed without extras."""
    env = tmp_path_factory.mktemp("client-venv")
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
         "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"pip install of the wheel failed:\n{done.stderr[-3000:]}"
    yield env


def _run(env: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], capture_output=True, text=True, timeout=120, check=False,
                          cwd=env, env={"PATH": f"{env / 'bin'}:/usr/bin:/bin",
                                        "HOME": str(env)})


def test_client_installs_without_the_server(client_env: Path) -> None:
    code = (
        "import importlib.util, sys\n"
        "from graphmem.client import GraphMem\n"
        "import graphmem.models\n"
        "from graphmem import cypher\n"
        "assert 'site-packages' in str(cypher.CYPHER_DIR), cypher.CYPHER_DIR\n"
        "assert 'MERGE' in cypher.load('queries/messages/write_messages')\n"
        f"present = [m for m in {SERVER_ONLY!r} if importlib.util.find_spec(m)]\n"
        "assert not present, present\n"
        "assert importlib.util.find_spec('api') is None\n"
        "print('ok')\n"
    )
    done = _run(client_env, str(client_env / "bin" / "python"), "-c", code)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_server_command_without_the_server_says_how_to_install_it(
    client_env: Path, tmp_path: Path
) -> None:
    graphmem = str(client_env / "bin" / "graphmem")
    assert _run(client_env, graphmem, "--help").returncode == 0
    sample = ROOT / "graphmem" / "demo" / "sample.jsonl"
    for args in (["ingest", str(sample)], ["serve"]):
        done = _run(client_env, graphmem, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert "pip install 'graphmem[server]'" in done.stderr


CONSUMER = textwrap.dedent("""\
    from __future__ import annotations

    import asyncio
    from datetime import UTC, datetime

    from graphmem.client import AsyncGraphMem, GraphMem, InvalidInputError
    from graphmem.wire import ContextResult, SearchRequest, SearchResult


    def recall(gm: GraphMem, owner: str) -> list[str]:
        try:
            found: SearchResult = gm.search(
                "where does alice live?", owner, k=5, method="rrf",
                time_from=datetime(2026, 1, 1, tzinfo=UTC), metadata={"channel": "chat"})
        except InvalidInputError as exc:
            field: str | None = exc.field
            return [f"{field}: {exc.detail}"]
        return [hit.text for hit in found.hits]


    async def arecall(gm: AsyncGraphMem, owner: str) -> list[str]:
        found = await gm.search(SearchRequest(query="where does alice live?", owner=owner))
        packed: ContextResult = await gm.context("where?", owner, units=["message", "fact"],
                                                 max_tokens=500)
        skills = await gm.search_skills("roll back a release", owner, units="cases", k=3)
        return [h.id for h in found.hits] + [packed.context] + [c.id for c in skills.cases]


    async def both() -> list[str]:
        async with AsyncGraphMem("http://127.0.0.1:8000", api_key="key") as gm:
            return await arecall(gm, "alice")


    if __name__ == "__main__":
        with GraphMem() as gm:
            print(recall(gm, "alice"), asyncio.run(both()))
    """)
WRONG = textwrap.dedent("""\
    from graphmem.client import GraphMem

    with GraphMem("http://127.0.0.1:8000") as gm:
        gm.search("where does alice live?", "alice", k="5")
        gm.context("where?", "alice", top_k=5)
    """)


def test_a_consumer_type_checks_against_the_installed_client(client_env: Path,
                                                               tmp_path: Path) -> None:
    """mypy --strict (this checkout's) reads the wheel's graphmem from the client virtualenv's
    site-packages, as a user's project would: without ``py.typed`` it would refuse the import."""
    (tmp_path / "consumer.py").write_text(CONSUMER, encoding="utf-8")
    (tmp_path / "wrong.py").write_text(WRONG, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}

    def mypy(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
             "--python-executable", str(client_env / "bin" / "python"),
             "--cache-dir", str(tmp_path / ".mypy_cache"), name],
            capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path, env=env)

    done = mypy("consumer.py")
    assert done.returncode == 0, done.stdout + done.stderr
    wrong = mypy("wrong.py")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    errors = [line for line in wrong.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, wrong.stdout
    assert errors[0].startswith("wrong.py:4:") and '"k"' in errors[0] and "[arg-type]" in errors[0]
    assert errors[1].startswith("wrong.py:5:") and '"top_k"' in errors[1], errors[1]
