"""The OpenAPI document, finished in one place: the bearer security scheme on every ``/v1``
operation; per operation, every error status the server can send, each an
``application/problem+json`` body (`Problem`) instead of FastAPI's default validation schema;
and on every request body its example (`api/examples.py`).

`document(schema)` is a pure function over FastAPI's generated schema; `install(app)` makes the
app serve its result. Which statuses an operation gets follows from what the edge does:
every operation can fail unexpectedly (500) or meet the HTTP server's limits (400 not HTTP,
408 too slow, 431 headers too large); ``/v1`` needs a key (401) that grants the call
(403) and is within its rate (429), and the store (503);
a body can be malformed (400), too large (413), not JSON (415) or invalid (422), and
parameters invalid (422);
a path with an id can name nothing (404); a few writes can conflict (409).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from graphmem.operations import OPERATIONS, TAGS

from .examples import EXAMPLES
from .problems import PROBLEM

SCHEME = "bearer"
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "description": "An error (RFC 9457). `field` names the input at fault, `errors` lists each.",
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "field": {"type": "string"},
        "error_count": {"type": "integer", "description": "How many errors there were; "
                        "`errors` lists the first 20"},
        "errors": {
            "type": "array", "maxItems": 20,
            "items": {
                "type": "object",
                "required": ["field", "problem"],
                "properties": {"field": {"type": "string"}, "problem": {"type": "string"}},
            },
        },
    },
}
MEANING = {
    400: "Malformed request: a body that is not JSON, not UTF-8 or nested too deeply, or a "
         "request that is not HTTP/1.1.",
    401: "No API key, or an unknown one.",
    403: "Refused to this key: another owner than its own, a write with a read-only key, or "
         "a call spanning the tenant with a key limited to some owners (`field` names the "
         "input, when one asked); outside /v1, served to loopback clients only.",
    404: "Nothing with this id (or no such route) for this tenant.",
    408: "The request line, headers or body did not arrive in time; the connection is closed.",
    409: "Conflict: an id already stored with other content, or a job in the wrong state; "
         "nothing was written.",
    413: "More than one request may be: the body exceeds the size limit, or the work a budget "
         "(`field` names it); nothing was done.",
    415: "The body is not JSON: send it as `application/json` (`Accept-Post`).",
    422: "Invalid input; `field` names it.",
    431: "The request line and headers exceed the server's limit (a query string too long "
         "among them); the connection is closed.",
    429: "Too many requests for this key (`rate_limit`); nothing was done: send it again after "
         "`Retry-After` seconds.",
    500: "Unexpected error (logged by the server).",
    503: "Neo4j is unreachable; retry later (see `Retry-After`).",
}
# Writes that can meet an id (or a job) already in another state.
CONFLICTS = {
    ("post", "/v1/messages"), ("post", "/v1/observations"), ("post", "/v1/profile/ops"),
    ("post", "/v1/jobs/{job_id}/rerun"), ("post", "/v1/traces"),
}
# Requests without a body that can still be more work than one request may do.
BUDGETED = {("delete", "/v1/sessions/{session_id}")}
# Operations endpoints outside /v1: the health probes say 503, /metrics may refuse a client.
PROBES = {"/healthz": {503}, "/readyz": {503}, "/metrics": {403}}
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


FOUND_BY_QUERY = {("get", "/v1/documents")}
"""Operations that read one thing named in their query, so may answer 404 (a document key's
version valid at ``as_of``)."""


def error_statuses(method: str, path: str, operation: dict[str, Any]) -> set[int]:
    """Every error status the server can send for this operation."""
    params = operation.get("parameters", [])
    out = {400, 408, 431, 500}  # the HTTP server refuses what it cannot parse, or too slow/large
    if path.startswith("/v1/"):
        out |= {401, 403, 429, 503}  # 403: what the key grants; 429: its rate
    out |= PROBES.get(path, set())
    if path.startswith("/browser/"):
        out.add(403)  # loopback clients only
    if "requestBody" in operation:
        out |= {400, 413, 415, 422}
    if params or path.startswith("/v1/audit/"):  # audit queries take any query parameter
        out.add(422)
    if any(p.get("in") == "path" for p in params) or (method, path) in FOUND_BY_QUERY:
        out.add(404)
    if (method, path) in CONFLICTS:
        out.add(409)
    if (method, path) in BUDGETED:
        out.add(413)
    return out


def document(schema: dict[str, Any], *, anonymous: bool = False) -> dict[str, Any]:
    """Add security and problem responses to a FastAPI OpenAPI schema (in place; returned)."""
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})[SCHEME] = {
        "type": "http", "scheme": "bearer",
        "description": "An API key (`graphmem key TENANT` prints one; `--owner`, `--read-only` "
                       "and `--rate-limit` make one that grants less).",
    }
    schemas = components.setdefault("schemas", {})
    schemas["Problem"] = PROBLEM_SCHEMA
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            if path.startswith("/v1/"):
                # The key travels as the security scheme, not as a header parameter.
                operation["parameters"] = [
                    p for p in operation.get("parameters", []) if not _is_key_header(p)
                ]
                if not operation["parameters"]:
                    del operation["parameters"]
                operation["security"] = [{SCHEME: []}, {}] if anonymous else [{SCHEME: []}]
            responses = operation.setdefault("responses", {})
            if "HTTPValidationError" in _refs({"paths": responses.get("422", {})}):
                del responses["422"]  # FastAPI's default; ours is added below where it applies
            for status in sorted(error_statuses(method, path, operation)):
                responses[str(status)] = {
                    "description": MEANING[status],
                    "content": {PROBLEM: {"schema": PROBLEM_REF}},
                }
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None and (method, path) in EXAMPLES:
                body["example"] = EXAMPLES[method, path]
    _declared(schema)
    if "HTTPValidationError" in schemas and "HTTPValidationError" not in _refs(schema):
        del schemas["HTTPValidationError"]
    if "ValidationError" in schemas and "ValidationError" not in _refs(schema):
        del schemas["ValidationError"]
    return schema


def _declared(schema: dict[str, Any]) -> None:
    """Each operation's area (tag) and summary as the table of operations declares them
    (`graphmem.operations`), and the areas described."""
    paths = schema.get("paths", {})
    for op in OPERATIONS:
        operation = paths.get(op.path, {}).get(op.method.lower())
        if operation is not None:
            operation["tags"] = [op.tag]
            operation["summary"] = op.summary
    described = [{"name": name, "description": text} for name, text in TAGS.items()]
    schema["tags"] = [*described, *[t for t in schema.get("tags", [])
                                    if t.get("name") not in TAGS]]


def _is_key_header(parameter: dict[str, Any]) -> bool:
    return bool(parameter.get("in") == "header"
                and str(parameter.get("name", "")).lower() == "authorization")


def _refs(schema: dict[str, Any]) -> set[str]:
    """Names of the component schemas referenced anywhere (but in their own definitions)."""
    found: set[str] = set()

    def walk(node: Any, skip: str | None) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name != skip:
                    found.add(name)
            for value in node.values():
                walk(value, skip)
        elif isinstance(node, list):
            for value in node:
                walk(value, skip)

    walk(schema.get("paths", {}), None)
    for name, definition in schema.get("components", {}).get("schemas", {}).items():
        walk(definition, name)
    return found


def install(app: FastAPI, *, anonymous: bool = False) -> None:
    """Serve the documented schema at ``/openapi.json`` (and so in ``/docs``)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(generate(), anonymous=anonymous)
        return app.openapi_schema

    setattr(app, "openapi", openapi)  # noqa: B010 (an instance attribute shadows the method)
