"""Unit tests of api.problems (field paths of validation errors, problem responses) and of
api.openapi (security and problem responses on every operation)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphmem.api.openapi import METHODS, PROBLEM_REF, document
from graphmem.api.problems import BUSY, PROBLEM, UNREACHABLE, _field, problem, store_unavailable
from graphmem.errors import StoreBusy, StoreUnavailable
from graphmem.models import DATETIME_PATTERN


@pytest.mark.parametrize(
    ("loc", "field"),
    [
        (("body", "messages", 0, "timestamp"), "messages[0].timestamp"),
        (("body", "messages", 12, "metadata", "topic"), "messages[12].metadata.topic"),
        (("body", "query"), "query"),
        (("body", "expand", "before"), "expand.before"),
        (("query", "limit"), "limit"),
        (("path", "message_id"), "message_id"),
        (("body", "messages"), "messages"),
        (("body", 0, "text"), "[0].text"),
        (("messages", 0), "messages[0]"),  # no location prefix: kept as is
        (("body",), "body"),
        ((), "body"),
    ],
)
def test_field_paths(loc: tuple[Any, ...], field: str) -> None:
    assert _field(loc) == field


def body_of(status: int, **extra: Any) -> dict[str, Any]:
    response = problem(status, "title", "detail", **extra)
    assert response.status_code == status
    assert response.media_type == PROBLEM
    return json.loads(bytes(response.body))


def test_problem_body_is_rfc9457() -> None:
    assert body_of(422, field="k") == {
        "type": "about:blank", "title": "title", "status": 422, "detail": "detail", "field": "k",
    }


def test_problem_401_asks_for_a_bearer_token() -> None:
    response = problem(401, "unauthorized", "no key")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert "Retry-After" not in response.headers


def test_problem_503_says_when_to_retry() -> None:
    response = problem(503, "store unavailable", "down")
    assert response.headers["Retry-After"] == "5"
    assert "WWW-Authenticate" not in response.headers


def test_problem_other_statuses_have_no_extra_headers() -> None:
    response = problem(404, "not found", "x")
    assert "Retry-After" not in response.headers
    assert "WWW-Authenticate" not in response.headers


# --- the OpenAPI document (api.openapi) -----------------------------------------------------

def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, item in schema["paths"].items()
            for method, op in item.items() if method in METHODS]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    from graphmem.api.app import create_app
    from graphmem.config import Settings

    return create_app(Settings()).openapi()


def test_every_v1_operation_needs_the_bearer_key(schema: dict[str, Any]) -> None:
    bearer = schema["components"]["securitySchemes"]["bearer"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")
    v1 = [(m, p, op) for m, p, op in _operations(schema) if p.startswith("/v1/")]
    assert len(v1) >= 15
    for method, path, op in v1:
        assert op.get("security") == [{"bearer": []}], (method, path)
        names = [p["name"].lower() for p in op.get("parameters", [])]
        assert "authorization" not in names, (method, path)


def test_every_operation_documents_its_errors_as_problems(schema: dict[str, Any]) -> None:
    assert "Problem" in schema["components"]["schemas"]
    assert "HTTPValidationError" not in json.dumps(schema)
    for method, path, op in _operations(schema):
        responses = op["responses"]
        expected = {"500"} | ({"401", "503"} if path.startswith("/v1/") else set())
        if "requestBody" in op:
            expected |= {"400", "413", "422"}
        if any(p["in"] == "path" for p in op.get("parameters", [])):
            expected |= {"404", "422"}
        assert expected <= set(responses), (method, path, sorted(responses))
        for status, response in responses.items():
            if int(status) >= 400:
                assert response["content"] == {PROBLEM: {"schema": PROBLEM_REF}}, (path, status)


def test_conflicting_writes_document_409(schema: dict[str, Any]) -> None:
    for method, path in [("post", "/v1/messages"), ("post", "/v1/jobs/{job_id}/rerun")]:
        assert "409" in schema["paths"][path][method]["responses"]
    assert "409" not in schema["paths"]["/v1/search"]["post"]["responses"]


def test_the_schema_documents_what_the_api_checks(schema: dict[str, Any]) -> None:
    """Constraints the API checks beyond the models' types are in the document, so generated
    clients (and the fuzzer's valid requests) send what the API accepts."""
    from graphmem import audit
    from graphmem.errors import InvalidInput
    from graphmem.procedural.models import ROLES
    from graphmem.procedural.steps import to_steps

    run = schema["paths"]["/v1/audit/{name}"]["get"]
    params = {p["name"]: p for p in run["parameters"]}
    assert params["name"]["schema"]["enum"] == audit.names()
    taken = {n for q in audit.all_queries() for n in q.params} - {"tenant"}
    assert taken == set(params) - {"name"}
    assert params["t"]["schema"] == {"type": "string", "format": "date-time",
                                     "pattern": DATETIME_PATTERN}
    assert "true_at" in params["owner"]["description"]

    components = schema["components"]["schemas"]
    message = components["TraceIn"]["properties"]["messages"]["items"]
    assert "required" not in message  # a Responses API item has a type, not a role
    assert set(message["properties"]) >= {"role", "type", "content", "parts", "tool_calls"}
    assert message["properties"]["role"]["enum"] == list(ROLES)
    assert to_steps([{"type": "function_call", "name": "f", "call_id": "c"}])
    for role in ROLES:  # every documented role is read, any other refused with its field
        assert to_steps([{"role": role, "content": "x"}])
    with pytest.raises(InvalidInput) as refused:
        to_steps([{"role": "robot", "content": "x"}])
    assert refused.value.field == "messages[0].role"

    op = components["ProfileOp"]
    assert op["if"]["properties"]["op"]["enum"] == ["ADD", "UPDATE"]
    assert op["then"]["required"] == ["value"]


def test_document_on_a_minimal_schema() -> None:
    raw: dict[str, Any] = {
        "paths": {
            "/v1/things/{id}": {"get": {
                "parameters": [{"name": "id", "in": "path"},
                               {"name": "authorization", "in": "header"}],
                "responses": {"200": {}, "422": {"content": {"application/json": {"schema": {
                    "$ref": "#/components/schemas/HTTPValidationError"}}}}},
            }},
            "/healthz": {"get": {"responses": {"200": {}}}},
        },
        "components": {"schemas": {
            "HTTPValidationError": {"properties": {"detail": {"items": {
                "$ref": "#/components/schemas/ValidationError"}}}},
            "ValidationError": {"type": "object"},
        }},
    }
    out = document(raw, anonymous=True)
    thing = out["paths"]["/v1/things/{id}"]["get"]
    assert thing["security"] == [{"bearer": []}, {}]  # anonymous allowed: the key is optional
    assert thing["parameters"] == [{"name": "id", "in": "path"}]
    assert sorted(thing["responses"]) == ["200", "400", "401", "403", "404", "408", "422",
                                          "429", "431", "500", "503"]
    assert sorted(out["paths"]["/healthz"]["get"]["responses"]) == ["200", "400", "408", "431",
                                                                    "500", "503"]
    assert "security" not in out["paths"]["/healthz"]["get"]
    assert sorted(out["components"]["schemas"]) == ["Problem"]


@pytest.mark.parametrize(("exc", "title", "detail"), [
    (StoreUnavailable("bolt://10.0.0.5:7687 refused"), "store unavailable", UNREACHABLE),
    (StoreBusy("DeadlockDetected, after 15 s of retries"), "store busy", BUSY),
])
def test_store_failures_are_503_without_the_drivers_words(
        exc: StoreUnavailable, title: str, detail: str) -> None:
    response = store_unavailable(exc)
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert json.loads(bytes(response.body))["title"] == title
    assert json.loads(bytes(response.body))["detail"] == detail


@pytest.mark.parametrize(("error", "level"), [("refused", "INFO"), ("broken", "ERROR")])
def test_a_501_is_logged_as_a_refusal_not_an_error(error: str, level: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A 501 (an LLM path with no LLM configured) is an answer the server means to give:
    logged at INFO; another 5xx from graphmem is an error."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from graphmem.answer.reader import ReaderNotConfigured
    from graphmem.api.problems import install
    from graphmem.errors import SchemaMismatch

    app = FastAPI()
    install(app)

    @app.get("/x")
    def raises() -> None:
        raise ReaderNotConfigured() if error == "refused" else SchemaMismatch("x")

    with caplog.at_level("INFO", logger="graphmem.api"):
        status = TestClient(app).get("/x").status_code
    assert status == (501 if error == "refused" else 500)
    [record] = [r for r in caplog.records if r.name == "graphmem.api"]
    assert record.levelname == level
