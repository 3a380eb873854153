"""Packaging rules checked on the source tree (no build): nothing imports a top-level ``api``
(it installs as ``graphmem.api``), the Cypher files are read through the package, the base
install stays light, and the command without the server extra says how to get it.

The wheel itself is built and installed by tests/integration/test_wheel.py.
"""

from __future__ import annotations

import ast
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from graphmem import cli, cypher

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# What `pip install graphmem` (the client and the command's shell) may pull in.
LIGHT = {"pydantic", "pydantic-settings", "httpx", "typer", "rich"}


def _python_files() -> list[Path]:
    return [p for folder in ("graphmem", "api", "tests", "scripts")
            for p in sorted((ROOT / folder).rglob("*.py")) if "__pycache__" not in p.parts]


def _top_level_api_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] == "api"]
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and node.module.split(".")[0] == "api"):
            found.append(f"from {node.module} import ...")
    return [f"{path.relative_to(ROOT)}:{n}" for n in found]


def test_nothing_imports_a_top_level_api() -> None:
    offenders = [hit for path in _python_files() for hit in _top_level_api_imports(path)]
    assert offenders == [], "import graphmem.api (inside api/: a relative import)"


def test_api_modules_import_each_other_relatively() -> None:
    offenders = []
    for path in sorted((ROOT / "api").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.level == 0
                    and (node.module or "").startswith("graphmem.api")):
                offenders.append(f"{path.relative_to(ROOT)}: from {node.module}")
    assert offenders == [], "inside api/, write `from .problems import ...`"


def test_no_server_target_names_a_top_level_api() -> None:
    """Strings naming ``api.app`` (uvicorn targets, commands) outside Python imports."""
    files = [*_python_files(), ROOT / "Dockerfile", ROOT / "Makefile", ROOT / "docker-compose.yml"]
    target = "api" + ".app:"  # not spelled whole, so this file does not find itself
    offenders = [str(p.relative_to(ROOT)) for p in files
                 if any(f"{c}{target}" in p.read_text(encoding="utf-8") for c in "\"' ")]
    assert offenders == []


def test_cypher_is_read_through_the_package() -> None:
    assert Path(str(resources.files("graphmem.cypher_files"))) == cypher.CYPHER_DIR
    assert cypher.CYPHER_DIR == ROOT / "cypher"  # the checkout's folder (editable install)
    assert "MERGE" in cypher.load("queries/messages/write_messages")
    assert cypher.names("audit")


def test_base_dependencies_are_light() -> None:
    base = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert base <= LIGHT, f"{sorted(base - LIGHT)}: a server dependency goes in the server extra"
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"neo4j", "fastapi", "uvicorn", "sentence-transformers"} <= {
        _name(r) for r in extras["server"]}
    assert "graphmem[server]" in extras["dev"]  # `pip install -e .[dev]` alone runs the tests
    assert PYPROJECT["project"]["scripts"]["graphmem"] == "graphmem.cli:main"


def _name(requirement: str) -> str:
    for stop in "[<>=!~; ":
        requirement = requirement.split(stop, 1)[0]
    return requirement.strip().lower().replace("_", "-")


def test_command_without_the_server_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def app() -> None:
        raise ModuleNotFoundError("No module named 'neo4j'", name="neo4j")

    monkeypatch.setattr(cli, "app", app)
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'graphmem[server]'" in err


def test_command_reraises_other_missing_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    def app() -> None:
        raise ModuleNotFoundError("No module named 'graphmem.nothing'", name="graphmem.nothing")

    monkeypatch.setattr(cli, "app", app)
    with pytest.raises(ModuleNotFoundError):
        cli.main()


def test_docker_image_installs_the_wheel_with_the_server_extra() -> None:
    installs = [line for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
                if "pip install" in line and "torch" not in line]
    assert installs and all(" -e " not in line for line in installs), installs
    assert any(".whl)[server]" in line for line in installs)
