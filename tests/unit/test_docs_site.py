"""The documentation (README.md and the site in docs/, mkdocs.yml) against the code, without
services: every HTTP route the docs name is an operation of the app's OpenAPI document and
every operation is named in the docs; every file path and `graphmem.` name they mention
exists; installation is said truthfully; the MCP examples use the SDK's own (snake_case)
names; the README stays short; the site builds offline with no warning.

The examples that need a server (the README's walk-through, the getting-started requests, the
MCP example) run in tests/integration/test_docs_site.py."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
SERVED = ("/v1/", "/healthz", "/readyz", "/metrics")
ROUTE = re.compile(
    r"\b(GET|POST|PUT|PATCH|DELETE) (/(?:v1/|healthz|readyz|metrics)[^\s`?,)\]\"']*)")
CURL = re.compile(r"curl\b[^\n]*(?:\\\n[^\n]*)*")
CURL_URL = re.compile(r"""["']?(?:https?://)?(?:localhost|127\.0\.0\.1):8000(/[^\s"'?]*)""")
TICKED = re.compile(r"`([^`\n]+)`")
TOP_LEVEL = ("graphmem/", "api/", "cypher/", "tests/", "scripts/", "docs/", ".ci/")
TOP_FILES = {"Makefile", "mkdocs.yml", "pyproject.toml", "setup.py", "docker-compose.yml",
             "Dockerfile", "README.md"}
NOT_PYTHON = {"graphmem.request", "graphmem.http", "graphmem.search"}  # loggers, a span
"""Dotted names the docs use that are not Python objects."""


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _where(page: Path) -> str:
    return str(page.relative_to(ROOT))


@cache
def _operations() -> frozenset[tuple[str, str]]:
    from graphmem.api.app import create_app
    from graphmem.config import Settings

    paths: dict[str, Any] = create_app(Settings()).openapi()["paths"]
    return frozenset((m.upper(), p) for p, item in paths.items() for m in item
                     if m.upper() in METHODS)


def _template(path: str) -> re.Pattern[str]:
    """An OpenAPI path as a pattern; a parameter may hold `/` (ids do)."""
    parts = re.split(r"\{[^}]+\}", path)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


def _matches(method: str, path: str) -> bool:
    concrete = re.sub(r"\{[^}]*\}", "x", path.rstrip("/") or "/")
    return any(m == method and _template(p).match(concrete) for m, p in _operations())


def _curl_routes(text: str) -> Iterator[tuple[str, str]]:
    for command in CURL.findall(text):
        url = CURL_URL.search(command)
        if url is None or not url.group(1).startswith(SERVED):
            continue
        explicit = re.search(r"-X\s+([A-Z]+)", command)
        method = explicit.group(1) if explicit else ("POST" if re.search(r"\s-d\s", command)
                                                     else "GET")
        yield method, url.group(1)


def _named_routes() -> list[tuple[Path, str, str]]:
    out = []
    for page in PAGES:
        text = _text(page)
        out += [(page, m, p) for m, p in ROUTE.findall(text)]
        out += [(page, m, p) for m, p in _curl_routes(text)]
    return out


def test_every_route_the_docs_name_exists() -> None:
    named = _named_routes()
    assert len(named) > 60, "the route pattern found almost nothing: is it still right?"
    missing = sorted({f"{_where(page)}: {m} {p}" for page, m, p in named
                      if not _matches(m, p)})
    assert missing == [], "routes the docs name that the app does not serve:\n" + "\n".join(
        missing)


def test_every_operation_is_named_in_the_docs() -> None:
    named = [(m, re.sub(r"\{[^}]*\}", "x", p)) for _, m, p in _named_routes()]
    undocumented = sorted(f"{m} {p}" for m, p in _operations() if p.startswith(SERVED)
                          and not any(m == nm and _template(p).match(np) for nm, np in named))
    assert undocumented == [], ("operations no page names (add them to docs/http-api.md):\n"
                                + "\n".join(undocumented))


def test_the_job_read_is_documented_and_served() -> None:
    assert ("GET", "/v1/jobs/{job_id}") in _operations()
    assert "`GET /v1/jobs/{id}`" in _text(DOCS / "http-api.md")


def _paths(text: str) -> Iterator[str]:
    for token in TICKED.findall(text):
        token = token.strip()
        if token in TOP_FILES:
            yield token
            continue
        if not token.startswith(TOP_LEVEL) or " " in token:
            continue
        if any(c in token for c in "<>*{}$|"):  # a pattern or a placeholder, not a path
            continue
        yield token.split("::")[0].split(":")[0].rstrip("/.,")


def test_every_file_path_the_docs_name_exists() -> None:
    missing = []
    for page in PAGES:
        text = _text(page)
        missing += [f"{_where(page)}: {p}" for p in _paths(text) if not (ROOT / p).exists()]
        # links between pages (README to docs/, docs to docs)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            file = (page.parent / target.split("#")[0]).resolve()
            if not file.exists():
                missing.append(f"{_where(page)}: link {target}")
    assert missing == [], "paths the docs name that do not exist:\n" + "\n".join(missing)


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_every_graphmem_name_the_docs_use_resolves() -> None:
    names = {(page, m) for page in PAGES
             for m in re.findall(r"`(graphmem(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`", _text(page))}
    assert len(names) > 5
    missing = sorted(f"{_where(page)}: {n}" for page, n in names
                     if n not in NOT_PYTHON and not _resolves(n))
    assert missing == [], "names the docs use that do not exist:\n" + "\n".join(missing)


def test_installation_is_from_a_checkout_or_a_wheel_never_from_pypi() -> None:
    wrong = [f"{_where(page)}: {line.strip()}" for page in PAGES
             for line in _text(page).splitlines()
             if re.search(r"""pip install\s+(?:-U\s+)?['"]?graphmem(?![\w\[-])""", line)]
    # (`pip install 'graphmem[plot]'` only adds an extra's packages to an installed graphmem)
    assert wrong == [], "graphmem is not on PyPI:\n" + "\n".join(wrong)
    start = _text(DOCS / "getting-started.md")
    assert "pip install '.[server]'" in start and "pip wheel --no-deps -w dist ." in start
    ts = _text(DOCS / "typescript-client.md")
    assert "make ts-pack" in ts and "npm install /path/to/graphmem/dist/graphmem-client" in ts


def _code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def test_mcp_examples_use_the_sdks_names() -> None:
    import mcp.types

    assert "server_info" in mcp.types.InitializeResult.model_fields
    assert "is_error" in mcp.types.CallToolResult.model_fields
    code = "\n".join(_code_blocks(_text(DOCS / "mcp.md"), "python"))
    assert "client.server_info" in code and ".is_error" in code
    camel = re.findall(r"\b(serverInfo|isError|structuredContent|listTools|callTool|"
                       r"protocolVersion)\b", code)
    assert camel == [], f"the Python SDK's names are snake_case: {camel}"


def test_mcp_tools_table_names_every_tool() -> None:
    import asyncio

    from graphmem.mcp.tools import build_server

    server = build_server(lambda ctx: None, tools="all")
    served = {t.name for t in asyncio.run(server.list_tools())}
    table = _text(DOCS / "mcp.md").split("## Tools", 1)[1].split("\n## ", 1)[0]
    first_column = re.findall(r"^\| ([^|]+) \|", table, flags=re.M)
    named = {n for cell in first_column for n in re.findall(r"`([a-z_]+)`", cell)}
    assert named == served, (f"tools missing from docs/mcp.md: {served - named}; "
                             f"named there but not served: {named - served}")


def test_the_readme_is_short_and_keeps_its_test_command() -> None:
    readme = _text(ROOT / "README.md")
    assert len(readme.splitlines()) <= 300
    assert "make run" in readme and "make test" in readme
    assert ">>> " in readme  # the walk-through, run by tests/integration/test_docs_site.py


def test_every_page_is_in_the_nav() -> None:
    config = _text(ROOT / "mkdocs.yml")
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    in_nav = set(re.findall(r":\s+([\w/.-]+\.md)\s*$", config, flags=re.M))
    assert pages == in_nav


def test_the_site_builds_offline_with_no_warning(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs is not None
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env={"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path),
                               "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    fetched = []
    for page in (tmp_path / "site").rglob("*.html"):
        fetched += re.findall(r"""<(?:link|script)[^>]+(?:href|src)=["'](https?://[^"']+)""",
                              page.read_text(encoding="utf-8"))
    assert fetched == [], f"the site loads from the network: {sorted(set(fetched))[:5]}"
