"""Statuses and headers of the HTTP API's refusals: a 405 lists in ``Allow`` every method some
route answers on the path (routes whose paths overlap included), and each method it lists is
answered there; a body that is not JSON, sent to an operation that takes JSON, is a 415 naming
the media type expected, while JSON under any of its media types (``application/json;
charset=utf-8``, ``application/*+json``) is read as before and requests without a body are
unaffected.

The refusals are decided before the store is asked, so most tests run the app without its
lifespan (`edge`); the ones that need an answer use the real app over Neo4j (`api`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from graphmem.api.app import create_app
from graphmem.api.openapi import METHODS
from graphmem.config import Settings, hash_api_key
from tests.integration.conftest import KEYS, auth
from tests.integration.helpers import owner

KEY = auth("key-a")


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return create_app(Settings(api_keys={hash_api_key(k): t for k, t in KEYS.items()}))


@pytest.fixture(scope="module")
def edge(app: FastAPI) -> TestClient:
    """The app without its lifespan (no Neo4j): enough for what is refused before the store."""
    return TestClient(app)


@pytest.fixture(scope="module")
def schema(app: FastAPI) -> dict[str, Any]:
    document: dict[str, Any] = app.openapi()
    return document


def filled(path: str) -> str:
    """A documented path with each parameter given a value: /v1/facts/{fact_id} -> /v1/facts/x."""
    return re.sub(r"\{[^}]+\}", "x", path)


def assert_problem(r: httpx.Response, status: int, field: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json", r.headers
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and body["detail"], body
    if field is not None:
        assert body["field"] == field, body
    return body


@pytest.mark.parametrize(("method", "path", "allow"), [
    # POST /v1/messages/forget, and GET and DELETE /v1/messages/{message_id} (id "forget")
    ("PATCH", "/v1/messages/forget", "DELETE, GET, POST"),
    # GET /v1/owners/{owner}/export, and DELETE /v1/owners/{owner} (owner "alice/export")
    ("PUT", "/v1/owners/alice/export", "DELETE, GET"),
    ("PUT", "/v1/observations", "GET, POST"),
    ("PUT", "/v1/messages/x", "DELETE, GET"),
    ("HEAD", "/v1/messages/x", "DELETE, GET"),  # /v1 does not answer HEAD
    ("PUT", "/openapi.json", "GET, HEAD"),  # a route that answers HEAD says so
    ("POST", "/healthz", "GET"),
])
def test_a_405_allows_every_method_of_the_path(edge: TestClient, method: str, path: str,
                                               allow: str) -> None:
    r = edge.request(method, path, headers=KEY)
    assert r.status_code == 405, r.text
    assert r.headers["allow"] == allow
    if method != "HEAD":
        body = assert_problem(r, 405)
        assert body["detail"] == f"{method} is not allowed on {path}"


def test_every_documented_method_is_in_the_allow_of_its_path(
    edge: TestClient, schema: dict[str, Any],
) -> None:
    for path, item in schema["paths"].items():
        r = edge.request("PATCH", filled(path), headers=KEY)  # no operation is a PATCH
        assert_problem(r, 405)
        documented = {m.upper() for m in item if m in METHODS}
        assert documented <= set(r.headers["allow"].split(", ")), (path, r.headers["allow"])


def test_each_method_a_405_allows_is_answered(api: TestClient) -> None:
    who = owner()
    for path in ("/v1/messages/forget", f"/v1/owners/{who}/export", "/v1/observations",
                 "/v1/messages/x"):
        allow = api.put(path, headers=KEY).headers["allow"]
        for method in allow.split(", "):
            r = api.request(method, path, headers=KEY)
            assert r.status_code != 405, (method, path, r.text)


@pytest.mark.parametrize("content_type", [
    "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
    "text/json", "application/jsonx", None,
])
def test_a_body_that_is_not_json_is_415(edge: TestClient, content_type: str | None) -> None:
    headers = {**KEY, **({"Content-Type": content_type} if content_type else {})}
    body = json.dumps({"query": "where", "owner": "alice"}).encode()
    r = edge.post("/v1/search", content=body, headers=headers)
    problem = assert_problem(r, 415, "body")
    assert problem["title"] == "unsupported media type"
    assert "application/json" in problem["detail"]
    assert (content_type or "no Content-Type") in problem["detail"]
    assert problem["errors"] == [{"field": "body", "problem": problem["detail"]}]
    assert r.headers["accept-post"] == "application/json"


def test_every_operation_with_a_body_refuses_one_that_is_not_json(
    edge: TestClient, schema: dict[str, Any],
) -> None:
    bodies = 0
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method not in METHODS:
                continue
            documented = "415" in op["responses"]
            assert documented == ("requestBody" in op), (method, path)
            if "requestBody" in op:
                bodies += 1
                r = edge.request(method.upper(), filled(path), content=b"{}",
                                 headers={**KEY, "Content-Type": "text/plain"})
                assert_problem(r, 415, "body")
    assert bodies >= 10


@pytest.mark.parametrize("content_type", [
    "application/json", "application/json; charset=utf-8", "Application/JSON",
    "application/vnd.graphmem+json",
])
def test_json_in_any_of_its_media_types_is_read(api: TestClient, content_type: str) -> None:
    body = json.dumps({"query": "where", "owner": owner()}).encode()
    r = api.post("/v1/search", content=body, headers={**KEY, "Content-Type": content_type})
    assert r.status_code == 200, r.text
    assert r.json()["hits"] == []


def test_requests_without_a_body_are_unaffected(api: TestClient) -> None:
    plain = {**KEY, "Content-Type": "text/plain"}
    missing = api.post("/v1/search", headers=plain)  # a body is needed: it is missing, not 415
    assert_problem(missing, 422)
    listed = api.get("/v1/sessions", params={"owner": owner()}, headers=plain)
    assert listed.status_code == 200 and listed.json() == []
