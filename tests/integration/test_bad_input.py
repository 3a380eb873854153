"""Bad input: each case gets a 4xx problem body naming the field; nothing is written."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner


def _post(api: TestClient, body: Any, **kw: Any) -> Any:
    return api.post("/v1/messages", json=body, headers=auth(), **kw)


def _problem(r: Any, status: int, field: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["detail"]
    assert body["field"] == field, body
    return body


def _nothing_written(cypher: Any, who: str) -> None:
    assert cypher("MATCH (m:Message {owner: $o}) RETURN count(m) AS n", o=who)[0]["n"] == 0


def test_malformed_json(api: TestClient) -> None:
    r = api.post("/v1/messages", content=b'{"messages": [', headers={
        **auth(), "Content-Type": "application/json"})
    _problem(r, 400, "body")


def test_missing_field(api: TestClient, cypher: Any) -> None:
    who = owner()
    m = msg(0, who)
    del m["speaker"]
    _problem(_post(api, {"messages": [msg(1, who), m]}), 422, "messages[1].speaker")
    _nothing_written(cypher, who)


def test_wrong_type(api: TestClient) -> None:
    _problem(_post(api, {"messages": [msg(0, owner(), text=["not", "a", "string"])]}), 422,
             "messages[0].text")
    _problem(_post(api, {"messages": "nope"}), 422, "messages")


def test_unknown_field(api: TestClient) -> None:
    _problem(_post(api, {"messages": [msg(0, owner(), colour="red")]}), 422, "messages[0].colour")


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_text(api: TestClient, text: str) -> None:
    _problem(_post(api, {"messages": [msg(0, owner(), text=text)]}), 422, "messages[0].text")


def test_ten_megabyte_text(api: TestClient, cypher: Any) -> None:
    who = owner()
    body = _problem(_post(api, {"messages": [msg(0, who, text="x" * 10_000_000)]}), 422,
                    "messages[0].text")
    assert "at most" in body["detail"]
    _nothing_written(cypher, who)


def test_timestamp_without_offset(api: TestClient) -> None:
    m = msg(0, owner(), timestamp="2023-05-08T13:56:00")
    body = _problem(_post(api, {"messages": [m]}), 422, "messages[0].timestamp")
    assert "timezone" in body["detail"]


def test_unparsable_timestamp(api: TestClient) -> None:
    m = msg(0, owner(), timestamp="last tuesday")
    _problem(_post(api, {"messages": [m]}), 422, "messages[0].timestamp")


def test_oversized_batch(api: TestClient, cypher: Any) -> None:
    who = owner()
    limit = 1000
    batch = [msg(i, who, text="x") for i in range(limit + 1)]
    body = _problem(_post(api, {"messages": batch}), 422, "messages")
    assert str(limit) in body["detail"]
    _nothing_written(cypher, who)


def test_oversized_body(api: TestClient) -> None:
    r = api.post("/v1/messages", content=b"x" * 20_000_001,
                 headers={**auth(), "Content-Type": "application/json"})
    _problem(r, 413, "body")


def test_empty_batch(api: TestClient) -> None:
    _problem(_post(api, {"messages": []}), 422, "messages")


@pytest.mark.parametrize(("body", "field"), [
    ({"owner": "x"}, "query"),
    ({"query": "", "owner": "x"}, "query"),
    ({"query": "q", "owner": "x", "k": 0}, "k"),
    ({"query": "q", "owner": "x", "method": "magic"}, "method"),
    ({"query": "q", "owner": "x", "expand": {"before": -1}}, "expand.before"),
    ({"query": "q", "owner": "x", "time_from": "2023-01-01T00:00:00"}, "time_from"),
    ({"query": "q", "owner": "x", "preset": "nope"}, "preset"),
])
def test_bad_search(api: TestClient, body: dict[str, Any], field: str) -> None:
    _problem(api.post("/v1/search", json=body, headers=auth()), 422, field)


def test_bad_paging(api: TestClient) -> None:
    r = api.get("/v1/sessions/s/messages", params={"limit": 0}, headers=auth())
    _problem(r, 422, "limit")
