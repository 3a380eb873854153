"""Edges of input found by fuzzing: names holding "/", datetimes out of range or given as
numbers, huge page offsets, audit names, non-finite numbers. Each gets a 4xx problem naming the
field (never a 500), nothing is stored wrongly, and every stored name stays reachable."""

from __future__ import annotations

import json
import math
import uuid
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from graphmem import audit
from graphmem import cypher as cypher_files
from graphmem.errors import InvalidInput, NotFound
from graphmem.jobs import JobQueue
from graphmem.models import MAX_SKIP
from graphmem.service import Memory
from tests.integration.conftest import KEYS, auth
from tests.integration.helpers import msg

JSON = {**auth(), "Content-Type": "application/json"}


def _problem(r: Any, status: int, field: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body: dict[str, Any] = r.json()
    if field is not None:
        assert body["field"] == field, body
    return body


def _slashed() -> str:
    return f"team/{uuid.uuid4().hex[:8]}"


def _enc(name: str) -> str:
    return quote(name, safe="")


SPELLINGS = [pytest.param(lambda n: n, id="raw-slash"), pytest.param(_enc, id="percent-encoded")]


# --- 1. names holding "/" are reachable on every route --------------------------------------


@pytest.mark.parametrize("spell", SPELLINGS)
def test_message_session_and_owner_with_slash(api: TestClient, cypher: Any, spell: Any) -> None:
    who = _slashed()
    ids = [f"conv-26/{who}/D1:{i}" for i in range(2)]
    batch = [msg(i, who, session="s/1", id=ids[i]) for i in range(2)]
    assert api.post("/v1/messages", json={"messages": batch}, headers=auth()).status_code == 201

    got = api.get(f"/v1/messages/{spell(ids[1])}", headers=auth())
    assert got.status_code == 200, got.text
    assert got.json()["id"] == ids[1]

    session = api.get(f"/v1/sessions/{spell('s/1')}/messages", params={"owner": who},
                      headers=auth())
    assert session.status_code == 200, session.text
    assert [m["id"] for m in session.json()] == ids

    gone = api.delete(f"/v1/owners/{spell(who)}", headers=auth())
    assert gone.status_code == 200, gone.text
    assert gone.json()["messages"] == 2 and gone.json()["owner"] == who
    assert cypher("MATCH (m:Message {owner: $o}) RETURN count(m) AS n", o=who)[0]["n"] == 0
    assert api.get(f"/v1/messages/{spell(ids[1])}", headers=auth()).status_code == 404


def test_session_named_like_the_route_suffix(api: TestClient) -> None:
    who = _slashed()
    m = msg(0, who, session="x/messages")
    assert api.post("/v1/messages", json={"messages": [m]}, headers=auth()).status_code == 201
    r = api.get(f"/v1/sessions/{_enc('x/messages')}/messages", params={"owner": who},
                headers=auth())
    assert [x["id"] for x in r.json()] == [m["id"]]
    api.delete(f"/v1/owners/{_enc(who)}", headers=auth())


@pytest.mark.parametrize("spell", SPELLINGS)
def test_fact_history_and_profile_with_slash(api: TestClient, spell: Any) -> None:
    who = _slashed()
    fid = f"obs/{who}/history"  # even the route's suffix inside the id
    obs = {"id": fid, "owner": who, "subject": "bob", "type": "employer", "content": "Acme"}
    r = api.post("/v1/observations", json={"observations": [obs]}, headers=auth())
    assert r.status_code == 201, r.text
    hist = api.get(f"/v1/observations/{spell(fid)}/history", headers=auth())
    assert hist.status_code == 200, hist.text
    assert [f["id"] for f in hist.json()["facts"]] == [fid]

    op = {"op": "ADD", "owner": who, "key": "city", "value": "Lisbon"}
    assert api.post("/v1/profile/ops", json={"ops": [op]}, headers=auth()).status_code == 201
    profile = api.get(f"/v1/profile/{spell(who)}", headers=auth())
    assert profile.status_code == 200, profile.text
    assert [(f["type"], f["content"]) for f in profile.json()] == [("city", "Lisbon")]

    assert api.delete(f"/v1/owners/{spell(who)}", headers=auth()).json()["facts"] == 2
    assert api.get(f"/v1/profile/{spell(who)}", headers=auth()).json() == []


@pytest.mark.parametrize("spell", SPELLINGS)
def test_job_rerun_with_slash(api: TestClient, memory: Memory, spell: Any) -> None:
    """Job ids are derived (kind, hash, generation), so they hold no "/" even when the key does;
    an id with "/" still reaches the route and gets the queue's own 404."""
    key = f"key/{uuid.uuid4().hex[:8]}"
    job_id = JobQueue(memory.store).enqueue(KEYS["key-a"], "edge_test", key)
    _problem(api.post(f"/v1/jobs/{spell(job_id)}/rerun", headers=auth()), 409)  # pending
    body = _problem(api.post(f"/v1/jobs/{spell('no/such')}/rerun", headers=auth()), 404)
    assert "no/such" in body["detail"]


@pytest.mark.parametrize(("method", "path", "field"), [
    ("GET", "/v1/sessions//messages", "session_id"),
    ("DELETE", "/v1/owners/", "owner"),
    ("GET", "/v1/observations//history", "fact_id"),
    ("POST", "/v1/jobs//rerun", "job_id"),
])
def test_empty_path_names(api: TestClient, method: str, path: str, field: str) -> None:
    _problem(api.request(method, path, headers=auth()), 422, field)


# --- 2. datetimes: offsets beyond +-18:00 and instants that leave the calendar --------------

BAD_TIMES = [
    pytest.param("2026-03-15T12:00:00+19:00", id="offset+19"),
    pytest.param("2026-03-15T12:00:00-23:59", id="offset-23:59"),
    pytest.param("0001-01-01T00:00:00+05:00", id="year1-before-utc"),
    pytest.param("9999-12-31T23:00:00-05:00", id="year9999-after-utc"),
    pytest.param("9500-01-01T00:00:00Z", id="beyond-max"),
]


def _obs(**kw: Any) -> dict[str, Any]:
    return {"observations": [{"owner": _slashed(), "subject": "x", "type": "t", "content": "c",
                              **kw}]}


# (method, path, how the value is sent, field named in the problem)
DATETIME_INPUTS: list[tuple[str, str, Any, str]] = [
    ("POST", "/v1/messages", lambda v: {"json": {"messages": [msg(0, _slashed(), timestamp=v)]}},
     "messages[0].timestamp"),
    ("POST", "/v1/search", lambda v: {"json": {"query": "q", "owner": "x", "time_to": v}},
     "time_to"),
    ("POST", "/v1/search", lambda v: {"json": {"query": "q", "owner": "x", "time_from": v}},
     "time_from"),
    ("POST", "/v1/search", lambda v: {"json": {"query": "q", "owner": "x", "as_of": v}},
     "as_of"),
    ("POST", "/v1/observations", lambda v: {"json": _obs(valid_from=v)},
     "observations[0].valid_from"),
    ("POST", "/v1/observations", lambda v: {"json": _obs(valid_to=v)},
     "observations[0].valid_to"),
    ("POST", "/v1/profile/ops", lambda v: {"json": {"ops": [
        {"op": "ADD", "owner": "x", "key": "k", "value": "v", "valid_from": v}]}},
     "ops[0].valid_from"),
    ("GET", "/v1/observations", lambda v: {"params": {"owner": "x", "as_of": v}}, "as_of"),
    ("GET", "/v1/observations", lambda v: {"params": {"owner": "x", "known_at": v}}, "known_at"),
    ("GET", "/v1/profile/x", lambda v: {"params": {"as_of": v}}, "as_of"),
    ("GET", "/v1/profile/x", lambda v: {"params": {"known_at": v}}, "known_at"),
    ("GET", "/v1/audit/true_at", lambda v: {"params": {"owner": "x", "t": v}}, "t"),
    ("GET", "/v1/audit/believed_at", lambda v: {"params": {
        "owner": "x", "t": "2026-01-01T00:00:00Z", "known_at": v}}, "known_at"),
    ("GET", "/v1/audit/superseded_in_window", lambda v: {"params": {
        "from": v, "to": "2026-01-01T00:00:00Z"}}, "from"),
]
INPUT_IDS = [f"{m} {p} {f}" for m, p, _, f in DATETIME_INPUTS]


@pytest.mark.parametrize("value", BAD_TIMES)
@pytest.mark.parametrize(("method", "path", "send", "field"), DATETIME_INPUTS, ids=INPUT_IDS)
def test_datetime_out_of_range(api: TestClient, method: str, path: str, send: Any, field: str,
                               value: str) -> None:
    _problem(api.request(method, path, headers=auth(), **send(value)), 422, field)


# --- 3. numbers (and other non-ISO forms) are not datetimes --------------------------------

NOT_DATETIMES = [
    pytest.param(1700000000, id="int"), pytest.param(0.5, id="float"),
    pytest.param("1700000000", id="digits"), pytest.param("0.5", id="decimal-string"),
    pytest.param("2026-03-15", id="date-only"), pytest.param("", id="empty"),
    pytest.param("2026-03-15T12:00:00", id="no-offset"), pytest.param(True, id="bool"),
]


@pytest.mark.parametrize("value", NOT_DATETIMES)
@pytest.mark.parametrize(("method", "path", "send", "field"), DATETIME_INPUTS, ids=INPUT_IDS)
def test_not_a_datetime(api: TestClient, method: str, path: str, send: Any, field: str,
                        value: Any) -> None:
    _problem(api.request(method, path, headers=auth(), **send(value)), 422, field)


def test_numeric_timestamp_is_not_stored(api: TestClient, cypher: Any) -> None:
    who = _slashed()
    r = api.post("/v1/messages", json={"messages": [msg(0, who, timestamp=1700000000)]},
                 headers=auth())
    _problem(r, 422, "messages[0].timestamp")
    assert cypher("MATCH (m:Message {owner: $o}) RETURN count(m) AS n", o=who)[0]["n"] == 0


def test_datetime_edges_accepted_and_stored_in_utc(api: TestClient) -> None:
    who = _slashed()
    batch = [msg(0, who, timestamp="0001-01-01T00:00:00Z", text="today, the first day"),
             msg(1, who, timestamp="8999-12-31T23:59:59+00:00", text="999 years from now"),
             msg(2, who, timestamp="2026-03-15T12:00:00+18:00", text="yesterday")]
    assert api.post("/v1/messages", json={"messages": batch}, headers=auth()).status_code == 201
    got = api.get(f"/v1/messages/{_enc(batch[2]['id'])}", headers=auth()).json()
    assert got["timestamp"].startswith("2026-03-14T18:00:00")
    r = api.post("/v1/search", headers=auth(), json={
        "query": "what happens this year", "owner": who, "as_of": "8999-12-31T23:59:59Z",
        "time_from": "0001-01-01T00:00:00Z", "time_to": "8999-12-31T23:59:59Z"})
    assert r.status_code == 200, r.text
    api.delete(f"/v1/owners/{_enc(who)}", headers=auth())


@pytest.mark.parametrize(("value", "field"), [
    ({"until": "0"}, "until"), ({"since": "20240101"}, "since"),
    ({"since": "2024-01-01T00:00:00Z"}, "since"), ({"until": "2024-02-30"}, "until"),
    ({"until": ""}, "until"), ({"since": "1.5"}, "since"),
])
def test_usage_dates_are_iso_dates(api: TestClient, value: dict[str, str], field: str) -> None:
    _problem(api.get("/v1/usage", params=value, headers=auth()), 422, field)
    ok = api.get("/v1/usage", params={"since": "2024-01-01", "until": "9999-12-31"},
                 headers=auth())
    assert ok.status_code == 200, ok.text


# --- 4. integers are bounded ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/sessions/s/messages", "/v1/jobs"])
@pytest.mark.parametrize("skip", [2**63, 2**64 + 1, MAX_SKIP + 1, -1, 10**400])
def test_skip_beyond_bound(api: TestClient, path: str, skip: int) -> None:
    _problem(api.get(path, params={"skip": skip}, headers=auth()), 422, "skip")


@pytest.mark.parametrize("path", ["/v1/sessions/s/messages", "/v1/jobs"])
def test_skip_at_bound(api: TestClient, path: str) -> None:
    assert api.get(path, params={"skip": MAX_SKIP}, headers=auth()).status_code == 200


@pytest.mark.parametrize("path", ["/v1/sessions/s/messages", "/v1/jobs"])
@pytest.mark.parametrize("limit", [2**63, 1001, "1e3", ""])
def test_limit_beyond_bound(api: TestClient, path: str, limit: Any) -> None:
    _problem(api.get(path, params={"limit": limit}, headers=auth()), 422, "limit")


@pytest.mark.parametrize(("raw", "ok"), [
    ("42", True), ("-9223372036854775808", True), ("9223372036854775807", True),
    ("9223372036854775808", False), ("-9223372036854775809", False), ("1_000", False),
    (" 7", False), ("1e3", False), ("", False), ("9" * 5000, False),
])
def test_audit_int_parameters_are_bounded(raw: str, ok: bool) -> None:
    if ok:
        assert audit.coerce("n", "int", raw) == int(raw)
    else:
        with pytest.raises(InvalidInput) as err:
            audit.coerce("n", "int", raw)
        assert err.value.field == "n"


# --- 5. audit names are an allow-list ------------------------------------------------------


@pytest.mark.parametrize("name", [
    "..%2Fqueries%2Fllm_usage%2Flist", "../queries/llm_usage/list", "%2E%2E%2Fschema%2Fx",
    "nope", "true_at.cypher", "TRUE_AT", "%00",
])
def test_unknown_audit_names_are_404(api: TestClient, name: str) -> None:
    r = api.get(f"/v1/audit/{name}", params={"tenant": "x"}, headers=auth())
    assert r.status_code == 404, r.text


def test_audit_never_loads_a_name_off_the_list(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []
    real = cypher_files.load
    monkeypatch.setattr(cypher_files, "load", lambda n: loaded.append(n) or real(n))
    for name in ("../queries/llm_usage/list", "../schema/constraints", "x/../true_at", ""):
        with pytest.raises(NotFound):
            audit.get(name)
    assert loaded == []
    assert audit.get("true_at").params == {"tenant": "string", "owner": "string", "t": "datetime"}


@pytest.mark.parametrize(("params", "field"), [
    ({"owner": "", "t": "2026-01-01T00:00:00Z"}, "owner"),
    ({"owner": "x" * 10_001, "t": "2026-01-01T00:00:00Z"}, "owner"),
])
def test_audit_string_parameters(api: TestClient, params: dict[str, str], field: str) -> None:
    _problem(api.get("/v1/audit/true_at", params=params, headers=auth()), 422, field)


# --- 6. other bad input that used to reach the store ---------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_metadata(api: TestClient, cypher: Any, value: float) -> None:
    who = _slashed()
    body = json.dumps({"messages": [msg(0, who, metadata={"x": value})]})  # NaN, Infinity
    r = api.post("/v1/messages", content=body.encode(), headers=JSON)
    _problem(r, 422, "messages[0].metadata.x")
    assert cypher("MATCH (m:Message {owner: $o}) RETURN count(m) AS n", o=who)[0]["n"] == 0


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_confidence(api: TestClient, value: float) -> None:
    r = api.post("/v1/observations", content=json.dumps(_obs(confidence=value)).encode(),
                 headers=JSON)
    _problem(r, 422, "observations[0].confidence")


@pytest.mark.parametrize(("path", "params", "field"), [
    ("/v1/jobs", {"state": "exploded"}, "state"),
    ("/v1/observations", {"owner": ""}, "owner"),
    ("/v1/observations", {"owner": "x", "subject": ""}, "subject"),
    ("/v1/observations", {"owner": "x", "include_history": "maybe"}, "include_history"),
    ("/v1/sessions/s/messages", {"owner": ""}, "owner"),
])
def test_bad_query_parameters(api: TestClient, path: str, params: dict[str, str],
                              field: str) -> None:
    _problem(api.get(path, params=params, headers=auth()), 422, field)


def test_lone_surrogate_text(api: TestClient, cypher: Any) -> None:
    who = _slashed()
    body = json.dumps({"messages": [msg(0, who, text="broken \ud800 text")]})
    assert "\\ud800" in body
    r = api.post("/v1/messages", content=body.encode(), headers=JSON)
    assert 400 <= r.status_code < 500, r.text
    assert cypher("MATCH (m:Message {owner: $o}) RETURN count(m) AS n", o=who)[0]["n"] == 0
