"""The table of operations (`graphmem.operations`) and the six surfaces held to it: the HTTP
routes (method, path, request and reply models, tag, a summary of its own), the MCP tools, the
client's calls, both Python clients and the TypeScript client's requests. An operation missing
from any surface, or one a surface has and the table lacks, fails here."""

from __future__ import annotations

import ast
import asyncio
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from graphmem.api.app import create_app
from graphmem.client import AsyncGraphMem, GraphMem, calls
from graphmem.config import Settings
from graphmem.mcp.tools import build_server
from graphmem.operations import BY_NAME, NOT_COVERED, OPERATIONS, TAGS, TOOLS, WRITE_TOOLS

TYPESCRIPT = Path(__file__).parents[2] / "api" / "typescript" / "src" / "index.ts"
TS_REQUEST = re.compile(r'method: "(\w+)", path: (["`])(.*?)\2.*?retry: (true|false)', re.S)


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return create_app(Settings()).openapi()


def _served(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(m.upper(), p): op for p, item in doc["paths"].items() for m, op in item.items()}


def _ref(schema: dict[str, Any] | None) -> str | None:
    """A schema's model name: its $ref, or its items' for a list; None for no model."""
    if not schema:
        return None
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[1]
    if schema.get("type") == "object" and "title" in schema:  # a model's schema, inline
        return str(schema["title"])
    if schema.get("type") == "array":
        inner = _ref(schema.get("items"))
        return f"list[{inner}]" if inner else None
    return None


def _name(model: Any) -> str | None:
    if model is None:
        return None
    if typing.get_origin(model) is list:
        return f"list[{_name(typing.get_args(model)[0])}]"
    return str(model.__name__)


def test_every_route_is_an_operation_and_every_operation_a_route(doc: dict[str, Any]) -> None:
    served = set(_served(doc)) - NOT_COVERED
    declared = {(op.method, op.path) for op in OPERATIONS}
    assert sorted(served - declared) == [], "routes missing from graphmem/operations.py"
    assert sorted(declared - served) == [], "operations without a route"


def test_routes_take_and_give_the_declared_models(doc: dict[str, Any]) -> None:
    served = _served(doc)
    wrong = []
    for op in OPERATIONS:
        route = served[(op.method, op.path)]
        content = route.get("requestBody", {}).get("content", {}).get("application/json", {})
        schema = content.get("schema")
        members = {_ref(s) for s in (schema or {}).get("oneOf", [])}  # a union: any member
        taken = {_ref(schema)} | members if schema else {None}
        if _name(op.request) not in taken:
            wrong.append((op.name, "request", taken, _name(op.request)))
        ok = next((r for s, r in route["responses"].items() if s.startswith("2")), {})
        reply = _ref(ok.get("content", {}).get("application/json", {}).get("schema"))
        if reply != _name(op.reply) and op.reply is not None:
            wrong.append((op.name, "reply", reply, _name(op.reply)))
    assert wrong == []


def test_each_operation_has_its_area_and_a_summary_of_its_own(doc: dict[str, Any]) -> None:
    served = _served(doc)
    summaries = [op.summary for op in OPERATIONS]
    assert len(set(summaries)) == len(summaries)
    every = [r.get("summary") for r in served.values()]
    assert len(set(every)) == len(every), "two operations share a summary"
    for op in OPERATIONS:
        assert served[(op.method, op.path)]["tags"] == [op.tag] and op.tag in TAGS
    assert [t["name"] for t in doc["tags"]][:len(TAGS)] == list(TAGS)


def test_the_clients_offer_every_operation() -> None:
    assert {n: (e.method, e.path, e.retry) for n, e in calls.ENDPOINTS.items()} == {
        op.name: (op.method, op.path, op.retry) for op in OPERATIONS}
    for client in (GraphMem, AsyncGraphMem):
        missing = [op.name for op in OPERATIONS if not callable(getattr(client, op.name, None))]
        assert missing == [], f"{client.__name__} lacks {missing}"


def test_the_typescript_client_sends_every_operation() -> None:
    def shape(path: str) -> str:
        return re.sub(r"\$\{[^}]*\}|\{[^}]*\}", "{}", path)

    sent = {(m, shape(p), retry == "true")
            for m, _, p, retry in TS_REQUEST.findall(TYPESCRIPT.read_text(encoding="utf-8"))}
    declared = {(op.method, shape(op.path), op.retry) for op in OPERATIONS}
    assert sorted(declared - sent) == [], "operations the TypeScript client does not send"
    assert sorted(sent - declared) == [], "requests of the TypeScript client the table lacks"


def test_the_mcp_tools_are_the_declared_ones() -> None:
    tools = asyncio.run(build_server(lambda _: None, tools="all").list_tools())
    assert {t.name for t in tools} == {t.name for t in TOOLS}
    writing = {t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)}
    assert writing == WRITE_TOOLS
    for tool in TOOLS:
        assert all(name in BY_NAME for name in tool.operations), tool.name


def test_the_routes_are_typed_end_to_end() -> None:
    """Module-level routers over a typed dependency (`api.deps.tenant_memory`): nothing in api/
    needs to silence the type checker."""
    api = Path(__file__).parents[2] / "api"
    assert [p.name for p in sorted(api.glob("*.py")) if "type: ignore" in p.read_text()] == []


def test_every_route_names_the_type_of_the_memory_it_takes() -> None:
    """A route's ``mem`` is ``Annotated[TenantMemory, Depends(tenant_memory)]`` where the route
    is written (not an alias from elsewhere), so a reader, or a tool that follows a request
    from its route down to the store, sees which facade it calls."""
    api = Path(__file__).parents[2] / "api"
    seen, wrong = 0, []
    for path in sorted(api.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in node.args.args:
                    if arg.arg == "mem":
                        seen += 1
                        written = ast.unparse(arg.annotation) if arg.annotation else ""
                        if written != "Annotated[TenantMemory, Depends(tenant_memory)]":
                            wrong.append(f"{path.name}:{node.name}: {written}")
    assert seen >= 40 and wrong == []
