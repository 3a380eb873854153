"""Unit tests of api.problems: field paths of validation errors and problem responses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.problems import PROBLEM, _field, problem


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
