"""Every list and every map a request may send has a declared bound in the OpenAPI document
(``maxItems`` / ``maxProperties``), so that a new operation or field cannot bring back a request
whose items are all validated, and all reported, however many there are. The parts of an agent
run that are kept as sent (chat message contents, tool calls, a system prompt's parts) are not
validated item by item: the body size bounds them."""

from __future__ import annotations

from typing import Any

from graphmem.api.app import create_app
from graphmem.config import Settings

AS_SENT = {
    "POST /v1/traces body.system", "POST /v1/traces body.messages[].content",
    "POST /v1/traces body.messages[].parts", "POST /v1/traces body.messages[].tool_calls",
    "POST /v1/traces body.traces[].system", "POST /v1/traces body.traces[].messages[].content",
    "POST /v1/traces body.traces[].messages[].parts",
    "POST /v1/traces body.traces[].messages[].tool_calls",
}
"""Passed through unvalidated (JSON kept as the agent sent it)."""


def _unbounded(doc: dict[str, Any]) -> list[str]:
    schemas = doc["components"]["schemas"]
    found: list[str] = []

    def walk(schema: Any, where: str, seen: frozenset[str]) -> None:
        if not isinstance(schema, dict):
            return
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            if name not in seen:
                walk(schemas[name], where, seen | {name})
            return
        values = schema.get("additionalProperties")
        if schema.get("type") == "array" and "maxItems" not in schema:
            found.append(where)
        if schema.get("type") == "object" and isinstance(values, dict) \
                and "maxProperties" not in schema:
            found.append(where + "{}")
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(key, []):
                walk(sub, where, seen)
        for name, sub in schema.get("properties", {}).items():
            walk(sub, f"{where}.{name}", seen)
        walk(schema.get("items"), where + "[]", seen)
        walk(values, where + "{}", seen)

    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            content = op.get("requestBody", {}).get("content", {})
            for media in content.values():
                walk(media.get("schema"), f"{method.upper()} {path} body", frozenset())
            for param in op.get("parameters", []):
                walk(param.get("schema"), f"{method.upper()} {path} {param['name']}",
                     frozenset())
    return found


def test_every_request_list_and_map_declares_its_bound() -> None:
    doc = create_app(Settings()).openapi()
    assert sorted(set(_unbounded(doc)) - AS_SENT) == []


def test_the_walk_finds_an_unbounded_list() -> None:
    doc = {"components": {"schemas": {"B": {"type": "object", "properties": {
        "xs": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}}}}}},
        "paths": {"/x": {"post": {"requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/B"}}}}}}}}
    assert _unbounded(doc) == ["POST /x body.xs", "POST /x body.m{}"]
