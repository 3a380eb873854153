"""The wire module: light to import, and the one source of every body the API sends or takes."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from typing import Any

from fastapi.routing import APIRoute
from pydantic import BaseModel

from graphmem import wire
from graphmem.api.app import create_app
from graphmem.api.openapi import PROBLEM_SCHEMA
from graphmem.config import Settings

HEAVY = ["neo4j", "sentence_transformers", "fastapi", "starlette", "openai", "uvicorn", "torch",
         "onnxruntime", "transformers", "pydantic_settings", "networkx", "dateparser",
         "prometheus_client", "typer"]


def test_client_and_wire_import_without_the_server_stack() -> None:
    code = (
        "import sys\n"
        f"for name in {HEAVY!r}:\n"
        "    sys.modules[name] = None  # importing it now raises ImportError\n"
        "import graphmem.wire, graphmem.client\n"
        "from graphmem.client import GraphMem, AsyncGraphMem\n"
        "import graphmem\n"
        "assert graphmem.__version__\n"
        "assert 'httpx' in sys.modules and 'pydantic' in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_graphmem_names_still_load_on_first_use() -> None:
    import graphmem
    from graphmem.config import Settings as Direct

    assert graphmem.Settings is Direct
    assert "Memory" in dir(graphmem)


def _models(tp: Any, seen: set[type[BaseModel]]) -> None:
    """Every pydantic model reachable from a type: itself, its type arguments, its fields."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp in seen:
            return
        seen.add(tp)
        for f in tp.model_fields.values():
            _models(f.annotation, seen)
        return
    for arg in typing.get_args(tp):
        _models(arg, seen)


def _api_routes(routes: list[Any]) -> list[APIRoute]:
    """The app's operations, through included routers (FastAPI keeps them nested)."""
    out: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            out.append(route)
        elif hasattr(route, "original_router"):
            out += _api_routes(route.original_router.routes)
        elif hasattr(route, "routes"):
            out += _api_routes(route.routes)
    return out


def _route_models() -> set[type[BaseModel]]:
    app = create_app(Settings())
    seen: set[type[BaseModel]] = set()
    for route in _api_routes(app.routes):
        _models(route.response_model, seen)
        for p in inspect.signature(route.endpoint).parameters.values():
            _models(p.annotation, seen)
    return seen


def test_every_body_model_of_the_api_is_the_wire_model() -> None:
    """Server, MCP tools and client use one definition of each body: they cannot drift."""
    models = _route_models()
    assert len(models) > 30
    outside = sorted(m.__name__ for m in models if getattr(wire, m.__name__, None) is not m)
    assert outside == [], f"models on the wire but not (the same object) in graphmem.wire: " \
                          f"{outside}"


def test_every_openapi_schema_comes_from_the_wire() -> None:
    schema = create_app(Settings()).openapi()
    names = set(schema["components"]["schemas"])
    missing = sorted(n for n in names if n not in wire.__all__)
    assert missing == []
    for name in names - {"Problem"}:
        model = getattr(wire, name)
        assert isinstance(model, type) and issubclass(model, BaseModel), name


def test_problem_model_matches_the_documented_problem() -> None:
    doc = wire.Problem.model_json_schema()
    assert {"type", *doc["required"]} == set(PROBLEM_SCHEMA["required"])  # type: about:blank
    assert set(doc["properties"]) == set(PROBLEM_SCHEMA["properties"])
    item = PROBLEM_SCHEMA["properties"]["errors"]["items"]
    assert set(wire.ProblemItem.model_fields) == set(item["properties"])
