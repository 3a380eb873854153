"""Temporal facts on the real store: the Linker, bitemporal queries, history, profile, audit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem import audit
from graphmem.errors import InvalidInput
from graphmem.facts.models import ObservationIn
from graphmem.models import MessageIn
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner


def day(d: int, month: int = 3) -> datetime:
    return datetime(2026, month, d, 12, tzinfo=UTC)


def obs(who: str, content: str, start: datetime | None, **kw: Any) -> ObservationIn:
    body = {"owner": who, "subject": kw.pop("subject", "release"),
            "type": kw.pop("type", "requirement"), "content": content, "valid_from": start, **kw}
    return ObservationIn.model_validate(body)


def current(memory: Memory, tenant: str, who: str, **kw: Any) -> list[str]:
    return [f.content or "" for f in memory.facts.query(memory.stores(tenant),
                                                        "observation", who, **kw)]


def test_release_example(memory: Memory, tenant: str) -> None:
    """A rollback test fails on March 10; March 12 requires rollback verification (r1); March 18
    requires it in a production-like setup (r2)."""
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in [
        msg(0, who, text="The rollback test failed.", timestamp=day(10).isoformat()),
        msg(1, who, text="No launch without rollback verification.", timestamp=day(12).isoformat()),
        msg(2, who, text="Verify rollback in a production-like setup.",
            timestamp=day(18).isoformat()),
    ]])
    r1 = memory.facts.observe(memory.stores(tenant),
                              [obs(who, "rollback verification before launch", None,
                                           sources=[f"{who}-s1-1"])])[0]
    r2 = memory.facts.observe(memory.stores(tenant), [obs(
        who, "rollback verification in a production-like setup before launch", None,
        sources=[f"{who}-s1-2"], reason="explicit replacement: staging is not enough")])[0]
    assert r1.action == r2.action == "created" and r2.superseded == [r1.id]
    assert current(memory, tenant, who, as_of=day(15)) == ["rollback verification before launch"]
    assert current(memory, tenant, who, as_of=day(20)) == [
        "rollback verification in a production-like setup before launch"]
    assert current(memory, tenant, who, as_of=day(11)) == []
    both = memory.facts.query(memory.stores(tenant), "observation", who, include_history=True)
    assert [f.id for f in both] == [r1.id, r2.id]
    old = both[0]
    assert old.valid_from == day(12) and old.valid_to == day(18) and old.invalidated_at
    history = memory.facts.history(memory.stores(tenant), r1.id)
    assert [f.id for f in history.facts] == [r1.id, r2.id]
    [edge] = history.supersessions
    assert (edge.by, edge.of, edge.source) == (r2.id, r1.id, f"{who}-s1-2")
    assert edge.reason == "explicit replacement: staging is not enough"


def test_same_content_adds_support(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who)) for i in range(2)])
    a = memory.facts.observe(memory.stores(tenant),
                             [obs(who, "Lives in Lisbon", day(1), type="city",
                                          sources=[f"{who}-s1-0"])])[0]
    b = memory.facts.observe(memory.stores(tenant),
                             [obs(who, "lives in  LISBON", day(5), type="city",
                                          sources=[f"{who}-s1-1"])])[0]
    assert (b.action, b.id) == ("supported", a.id)
    rows = cypher("MATCH (f:Fact {id: $id})-[:SUPPORTED_BY]->(m) RETURN count(m) AS n", id=a.id)
    assert rows[0]["n"] == 2


def test_out_of_order_fact_goes_into_history(memory: Memory, tenant: str) -> None:
    who = owner()
    late = memory.facts.observe(memory.stores(tenant),
                                [obs(who, "Munich", day(20), type="city")])[0]
    early = memory.facts.observe(memory.stores(tenant),
                                 [obs(who, "Berlin", day(1), type="city")])[0]
    assert early.superseded_by == late.id
    assert current(memory, tenant, who) == ["Munich"]
    assert current(memory, tenant, who, as_of=day(10)) == ["Berlin"]
    middle = memory.facts.observe(memory.stores(tenant),
                                  [obs(who, "Hamburg", day(10), type="city")])[0]
    assert middle.superseded == [early.id] and middle.superseded_by == late.id
    assert current(memory, tenant, who, as_of=day(5)) == ["Berlin"]
    assert current(memory, tenant, who, as_of=day(15)) == ["Hamburg"]
    assert current(memory, tenant, who, as_of=day(25)) == ["Munich"]


def test_a_value_believed_again_after_its_replacement_is_a_new_fact(
        memory: Memory, tenant: str) -> None:
    """B from day 10, then A from day 10 (B's interval closes empty), then B from day 10 again:
    B is current again, as a new node; the first B stays in history. Retrying the last write
    only adds support."""
    who = owner()
    first = memory.facts.observe(memory.stores(tenant), [obs(who, "B", day(10), type="city")])[0]
    a = memory.facts.observe(memory.stores(tenant), [obs(who, "A", day(10), type="city")])[0]
    again = memory.facts.observe(memory.stores(tenant), [obs(who, "B", day(10), type="city")])[0]
    assert again.action == "created" and again.id == f"{first.id}-2"
    assert again.superseded == [a.id]
    assert current(memory, tenant, who, as_of=day(11)) == ["B"]
    history = memory.facts.query(memory.stores(tenant), "observation", who, include_history=True)
    assert {f.id for f in history} == {first.id, a.id, again.id}
    retry = memory.facts.observe(memory.stores(tenant), [obs(who, "B", day(10), type="city")])[0]
    assert (retry.action, retry.id) == ("supported", again.id)
    for name in ("integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes"):
        assert audit.run(memory.store, tenant, name, {}) == [], name


def test_multi_valued_types_accumulate(memory: Memory, tenant: str) -> None:
    who = owner()
    for hobby in ("climbing", "cello", "climbing"):
        memory.facts.observe(memory.stores(tenant),
                             [obs(who, hobby, day(1), type="hobby", subject=who)])
    assert sorted(current(memory, tenant, who)) == ["cello", "climbing"]


def test_known_at_shows_past_beliefs(memory: Memory, tenant: str) -> None:
    who = owner()
    memory.facts.observe(memory.stores(tenant), [obs(who, "v1", day(1), type="version")])
    between = datetime.now(UTC)
    memory.facts.observe(memory.stores(tenant), [obs(who, "v2", day(2), type="version")])
    assert current(memory, tenant, who, known_at=between, as_of=day(5)) == ["v1"]
    assert current(memory, tenant, who, as_of=day(5)) == ["v2"]
    assert current(memory, tenant, who, known_at=datetime(2000, 1, 1, tzinfo=UTC)) == []


def test_concurrent_writers_leave_one_current_fact(memory: Memory, tenant: str) -> None:
    who = owner()
    values = [f"value {i}" for i in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda v: memory.facts.observe(memory.stores(tenant),
                                                     [obs(who, v, None, type="status")]),
                      values))
    assert len(current(memory, tenant, who)) == 1
    assert len(memory.facts.query(memory.stores(tenant),
                                  "observation", who, include_history=True)) == 12
    for name in ("integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes"):
        assert audit.run(memory.store, tenant, name, {}) == [], name


def test_type_cardinality_is_fixed(memory: Memory, tenant: str) -> None:
    who = owner()
    memory.facts.observe(memory.stores(tenant),
                         [obs(who, "a", day(1), type="colour", cardinality="multi")])
    with pytest.raises(InvalidInput) as err:
        memory.facts.observe(memory.stores(tenant),
                             [obs(who, "b", day(2), type="colour", cardinality="single")])
    assert err.value.field == "observations[0].cardinality"


def test_profile_ops(api: TestClient) -> None:
    who = owner()
    ops = [{"op": "ADD", "owner": who, "key": "city", "value": "Berlin",
            "valid_from": "2026-01-01T00:00:00Z"},
           {"op": "ADD", "owner": who, "key": "diet", "value": "vegetarian",
            "valid_from": "2026-01-01T00:00:00Z"}]
    assert api.post("/v1/profile/ops", json={"ops": ops}, headers=auth()).status_code == 201
    upd = [{"op": "UPDATE", "owner": who, "key": "city", "value": "Munich",
            "valid_from": "2026-02-01T00:00:00Z"},
           {"op": "DELETE", "owner": who, "key": "diet", "valid_from": "2026-02-15T00:00:00Z"},
           {"op": "NOOP", "owner": who, "key": "city"}]
    r = api.post("/v1/profile/ops", json={"ops": upd}, headers=auth())
    assert [w["action"] for w in r.json()] == ["created", "created", "noop"]
    now = {f["type"]: f["content"] for f in api.get(f"/v1/profile/{who}", headers=auth()).json()}
    assert now == {"city": "Munich"}
    past = api.get(f"/v1/profile/{who}", params={"as_of": "2026-01-15T00:00:00Z"},
                   headers=auth()).json()
    assert {f["type"]: f["content"] for f in past} == {"city": "Berlin", "diet": "vegetarian"}
    history = api.get(f"/v1/profile/{who}", params={"include_history": "true"},
                      headers=auth()).json()
    assert len(history) == 4 and any(f["deleted"] for f in history)


def test_observations_over_http(api: TestClient) -> None:
    who = owner()
    body = {"observations": [{"owner": who, "subject": "bob", "type": "employer",
                              "content": "Acme", "valid_from": "2025-01-01T00:00:00Z"}]}
    r = api.post("/v1/observations", json=body, headers=auth())
    assert r.status_code == 201, r.text
    fid = r.json()[0]["id"]
    got = api.get("/v1/observations", params={"owner": who, "subject": "bob"}, headers=auth())
    assert [f["content"] for f in got.json()] == ["Acme"]
    assert api.get(f"/v1/observations/{fid}/history", headers=auth()).status_code == 200
    assert api.get(f"/v1/observations/{fid}/history", headers=auth("key-b")).status_code == 404
    other = api.get("/v1/observations", params={"owner": who}, headers=auth("key-b")).json()
    assert other == []


@pytest.mark.parametrize(("item", "field"), [
    ({"valid_from": "2026-03-10T00:00:00Z", "valid_to": "2026-03-01T00:00:00Z"},
     "observations[0].valid_to"),
    ({"valid_from": "2026-03-10T00:00:00Z", "valid_to": "2026-03-10T00:00:00Z"},
     "observations[0].valid_to"),
    ({"sources": ["no-such-message"]}, "observations[0].sources"),
    ({"explicit": False}, "observations[0].sources"),
    ({"valid_from": "2026-03-10"}, "observations[0].valid_from"),
    ({"confidence": 2}, "observations[0].confidence"),
])
def test_bad_observations(api: TestClient, item: dict[str, Any], field: str) -> None:
    base = {"owner": owner(), "subject": "x", "type": "t", "content": "c"}
    r = api.post("/v1/observations", json={"observations": [{**base, **item}]}, headers=auth())
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field


def test_type_used_both_ways_over_http(api: TestClient) -> None:
    who = owner()
    first = {"owner": who, "subject": "x", "type": f"kind-{who}", "content": "a",
             "cardinality": "multi"}
    assert api.post("/v1/observations", json={"observations": [first]},
                    headers=auth()).status_code == 201
    r = api.post("/v1/observations", json={"observations": [{**first, "cardinality": "single"}]},
                 headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "observations[0].cardinality"


def test_audit_queries_over_http(api: TestClient) -> None:
    who = owner()
    api.post("/v1/messages", json={"messages": [msg(0, who, text="I moved to Munich")]},
             headers=auth())
    obs_body = [{"owner": who, "subject": who, "type": "city", "content": "Berlin",
                 "valid_from": "2026-01-01T00:00:00Z"},
                {"owner": who, "subject": who, "type": "city", "content": "Munich",
                 "valid_from": "2026-02-01T00:00:00Z", "sources": [f"{who}-s1-0"],
                 "reason": "moved"}]
    written = api.post("/v1/observations", json={"observations": obs_body}, headers=auth()).json()
    names = {q["name"] for q in api.get("/v1/audit", headers=auth()).json()}
    assert {"subject_history", "true_at", "believed_at", "superseded_in_window", "fact_sources",
            "integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes",
            "integrity_missing_source"} <= names

    def run(name: str, **params: str) -> list[dict[str, Any]]:
        r = api.get(f"/v1/audit/{name}", params=params, headers=auth())
        assert r.status_code == 200, r.text
        rows: list[dict[str, Any]] = r.json()["rows"]
        return rows

    hist = run("subject_history", owner=who, subject=who)
    assert [(h["content"], h["reason"]) for h in hist] == [("Berlin", "moved"), ("Munich", None)]
    assert hist[0]["valid_from"] == "2026-01-01T00:00:00Z"  # times as every reply writes them
    assert [r["content"] for r in run("true_at", owner=who, t="2026-01-15T00:00:00Z")] == [
        "Berlin"]
    window = run("superseded_in_window", **{"from": "2000-01-01T00:00:00Z",
                                            "to": "2100-01-01T00:00:00Z"})
    assert [w["old_content"] for w in window if w["owner"] == who] == ["Berlin"]
    sources = run("fact_sources", id=written[1]["id"])
    assert [s["text"] for s in sources] == ["I moved to Munich"]
    believed = run("believed_at", owner=who, known_at="2100-01-01T00:00:00Z",
                   t="2026-03-01T00:00:00Z")
    assert [b["content"] for b in believed] == ["Munich"]
    for name in ("integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes",
                 "integrity_missing_source"):
        assert run(name) == [], name
    r = api.get("/v1/audit/true_at", params={"owner": who}, headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "t"
    r = api.get("/v1/audit/true_at", params={"owner": who, "t": "yesterday"}, headers=auth())
    assert r.status_code == 422
    assert api.get("/v1/audit/nope", headers=auth()).status_code == 404


def test_search_units(memory: Memory, tenant: str) -> None:
    from graphmem.models import SearchRequest

    who = owner()
    memory.ops(tenant).ingest_messages(
        [MessageIn.model_validate(msg(0, who, text="We adopted a puppy."))])
    memory.facts.observe(memory.stores(tenant), [
        obs(who, "a beagle called Luna", day(1), subject=who, type="pet"),
        obs(who, "Lisbon", day(1), subject=who, type="city"),
        obs(who, "Porto", day(2), subject=who, type="city"),
    ])
    res = memory.ops(tenant).search_units(SearchRequest(
        query="what pet does she have, a puppy?", owner=who, units="both", k=2))
    assert res.hits and res.observations
    assert res.observations[0].content == "a beagle called Luna"
    assert [r.unit for r in res.interleaved][:2] == ["message", "observation"]
    assert res.context.startswith("## facts") and "puppy" in res.context
    cities = memory.ops(tenant).search_units(SearchRequest(query="which city", owner=who,
                                                 units="observations", k=5))
    assert cities.hits == [] and "Lisbon" not in [o.content for o in cities.observations]
    assert "Porto" in [o.content for o in cities.observations]
    past = memory.ops(tenant).search_units(SearchRequest(query="which city", owner=who,
                                               units="observations", k=5, as_of=day(1)))
    assert "Lisbon" in [o.content for o in past.observations]


def test_given_id_with_other_content_conflicts(memory: Memory, tenant: str) -> None:
    from graphmem.errors import Conflict

    who = owner()
    memory.facts.observe(memory.stores(tenant), [obs(who, "one", day(1), id="fixed-id")])
    again = memory.facts.observe(memory.stores(tenant), [obs(who, "one", day(1), id="fixed-id")])[0]
    assert (again.action, again.id) == ("supported", "fixed-id")
    with pytest.raises(Conflict):
        memory.facts.observe(memory.stores(tenant), [obs(who, "two", day(2), id="fixed-id")])


def test_demo_loads_idempotently(memory: Memory, tenant: str, cypher: Any) -> None:
    from graphmem import demo

    demo.load(memory, tenant)
    demo.load(memory, tenant)
    assert [f.content for f in memory.facts.query(memory.stores(tenant), "observation", "alice",
                                                  subject="release")] == [
        "Rollback must be verified in a production-like setup with real traffic replay before "
        "launch"]
    captions = cypher("MATCH (n {tenant: $t}) WHERE n.caption IS NULL AND NOT n:FactKey "
                      "AND NOT n:FactType RETURN labels(n) AS l LIMIT 1", t=tenant)
    assert captions == []
    for name in ("integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes",
                 "integrity_missing_source"):
        assert audit.run(memory.store, tenant, name, {}) == [], name
