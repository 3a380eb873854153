"""Writing and reading raw messages: idempotency, atomic batches, NEXT order, forgetting."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from graphmem.models import MessageIn
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import T0, msg, owner


def _chain(cypher: Any, tenant: str, who: str, session: str) -> list[str]:
    """The session's messages following NEXT from the one without a predecessor."""
    rows = cypher(
        "MATCH (first:Message {tenant: $t, owner: $o, session_id: $s}) "
        "WHERE NOT ()-[:NEXT]->(first) "
        "MATCH p = (first)-[:NEXT*0..]->(last) WHERE NOT (last)-[:NEXT]->() "
        "RETURN [n IN nodes(p) | n.id] AS ids",
        t=tenant, o=who, s=session,
    )
    assert len(rows) == 1, f"expected one chain, got {rows}"
    ids: list[str] = rows[0]["ids"]
    return ids


def test_post_get_and_list(api: TestClient) -> None:
    who = owner()
    r = api.post("/v1/messages", json={"messages": [msg(i, who) for i in range(3)]}, headers=auth())
    assert r.status_code == 201, r.text
    assert r.json()["created"] == 3
    got = api.get(f"/v1/messages/{who}-s1-1", headers=auth()).json()
    assert got["text"] == "message number 1 of s1" and got["speaker"] == "bob"
    assert got["timestamp"].endswith("Z") or got["timestamp"].endswith("+00:00")
    listed = api.get("/v1/sessions/s1/messages", params={"owner": who}, headers=auth()).json()
    assert [m["id"] for m in listed] == [f"{who}-s1-{i}" for i in range(3)]
    assert api.get("/v1/messages/nope", headers=auth()).status_code == 404


def test_an_owners_sessions_latest_first(api: TestClient) -> None:
    who = owner()
    body = {"messages": [msg(i, who, "early") for i in range(3)]
            + [msg(i, who, "late/1") for i in (5, 9)] + [msg(7, who, "middle")]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    listed = api.get("/v1/sessions", params={"owner": who}, headers=auth()).json()
    assert [(s["session_id"], s["message_count"]) for s in listed] == [
        ("late/1", 2), ("middle", 1), ("early", 3)]
    assert listed[0]["owner"] == who
    times = [datetime.fromisoformat(listed[0][k]) for k in ("first_at", "last_at")]
    assert times == [T0 + timedelta(seconds=150), T0 + timedelta(seconds=270)]
    page = api.get("/v1/sessions", params={"owner": who, "skip": 1, "limit": 1},
                   headers=auth()).json()
    assert [s["session_id"] for s in page] == ["middle"]
    assert api.get("/v1/sessions", params={"owner": who}, headers=auth("key-b")).json() == []
    r = api.get("/v1/sessions", headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "owner"
    api.delete(f"/v1/owners/{who}", headers=auth())
    assert api.get("/v1/sessions", params={"owner": who}, headers=auth()).json() == []


def test_a_tenants_owners_by_name(api: TestClient, memory: Memory, tenant: str) -> None:
    from graphmem.facts.models import ObservationIn
    from graphmem.procedural.models import TraceIn
    from tests.integration.test_procedural import run

    tm = memory.for_tenant(tenant)
    tm.messages.ingest([MessageIn.model_validate(msg(i, "bea", s)) for i, s in
                        ((0, "s1"), (1, "s1"), (5, "s2"))])
    tm.facts.observe([ObservationIn.model_validate({
        "owner": "ada", "subject": "ada", "type": "city", "content": "Porto", "explicit": True})])
    memory.procedural.ingest(memory.stores(tenant),
                             [TraceIn.model_validate(run("cy", 1, "success", ["x"]))])
    listed = tm.messages.owners()
    assert [(o.owner, o.sessions, o.messages, o.facts, o.traces) for o in listed] == [
        ("ada", 0, 0, 1, 0), ("bea", 2, 3, 0, 0), ("cy", 0, 0, 0, 1)]
    assert listed[1].last_message_at == T0 + timedelta(seconds=150)
    assert listed[0].last_message_at is None
    assert [o.owner for o in tm.messages.owners(after="ada", limit=1)] == ["bea"]
    assert tm.messages.owners(after="cy") == []
    tm.messages.forget_owner("bea")
    assert [o.owner for o in tm.messages.owners()] == ["ada", "cy"]
    # over HTTP: bounded paging, another tenant's owners unseen
    r = api.get("/v1/owners", params={"limit": 0}, headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "limit"
    who = owner()
    api.post("/v1/messages", json={"messages": [msg(0, who)]}, headers=auth())
    mine = api.get("/v1/owners", params={"after": who[:-1], "limit": 200}, headers=auth())
    assert who in [o["owner"] for o in mine.json()]
    theirs = api.get("/v1/owners", params={"limit": 200}, headers=auth("key-b")).json()
    assert who not in [o["owner"] for o in theirs]
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_same_id_twice_is_stored_once(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    batch = [MessageIn.model_validate(msg(i, who)) for i in range(2)]
    assert memory.ops(tenant).ingest_messages(batch).created == 2
    again = memory.ops(tenant).ingest_messages(batch)
    assert (again.created, again.duplicates) == (0, 2)
    count = cypher("MATCH (m:Message {tenant: $t}) RETURN count(m) AS n", t=tenant)[0]["n"]
    assert count == 2


def test_retry_without_id_is_stored_once(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    m = MessageIn.model_validate({k: v for k, v in msg(0, who).items() if k != "id"})
    first = memory.ops(tenant).ingest_messages([m])
    second = memory.ops(tenant).ingest_messages([m])
    assert first.ids == second.ids and second.created == 0
    count = cypher("MATCH (m:Message {tenant: $t}) RETURN count(m) AS n", t=tenant)[0]["n"]
    assert count == 1


def test_conflicting_id_writes_nothing(api: TestClient, cypher: Any) -> None:
    who = owner()
    api.post("/v1/messages", json={"messages": [msg(0, who)]}, headers=auth())
    clash = msg(0, who, text="other content under the same id")
    r = api.post("/v1/messages", json={"messages": [msg(1, who), clash]}, headers=auth())
    assert r.status_code == 409, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    rows = cypher("MATCH (m:Message {owner: $o}) RETURN m.id AS id, m.text AS text", o=who)
    assert rows == [{"id": f"{who}-s1-0", "text": "message number 0 of s1"}], "batch half-written"


def test_out_of_order_arrivals_land_in_place(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    order = [5, 0, 3, 9, 1, 7, 2, 8, 4, 6]
    for i in order[:4]:
        memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who))])
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who)) for i in order[4:]])
    assert _chain(cypher, tenant, who, "s1") == [f"{who}-s1-{i}" for i in range(10)]
    sessions = cypher(
        "MATCH (s:Session {tenant: $t, owner: $o}) RETURN s.message_count AS n", t=tenant, o=who
    )
    assert sessions == [{"n": 10}]


def test_sessions_are_chained_separately(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    batch = [msg(i, who, "a") for i in range(3)] + [msg(i, who, "b") for i in range(3)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in batch])
    assert _chain(cypher, tenant, who, "a") == [f"{who}-a-{i}" for i in range(3)]
    assert _chain(cypher, tenant, who, "b") == [f"{who}-b-{i}" for i in range(3)]


def test_sentence_units_are_linked(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    text = "I adopted a dog. Her name is Luna! Does she like parks?"
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(0, who, text=text))])
    rows = cypher(
        "MATCH (s:Sentence {tenant: $t})-[:PART_OF]->(m:Message) "
        "RETURN s.text AS text, size(s.embedding) AS dims ORDER BY s.idx", t=tenant,
    )
    assert [r["text"] for r in rows] == ["I adopted a dog.", "Her name is Luna!",
                                         "Does she like parks?"]
    assert {r["dims"] for r in rows} == {memory.embedder.dimensions}


def test_delete_owner_reports_and_removes(api: TestClient, cypher: Any) -> None:
    who, other = owner(), owner()
    api.post("/v1/messages", json={"messages": [msg(i, who) for i in range(4)]}, headers=auth())
    api.post("/v1/messages", json={"messages": [msg(0, other)]}, headers=auth())
    r = api.delete(f"/v1/owners/{who}", headers=auth())
    assert r.status_code == 200
    # entities: the speakers alice and bob, and the walk link verb:message ("message number i")
    assert r.json() == {"owner": who, "messages": 4, "sentences": 4, "sessions": 1, "facts": 0,
                        "episodes": 0, "jobs": 1, "windows": 0, "procedural": 0,
                        "entities": 3, "documents": 0}
    assert cypher("MATCH (n {owner: $o}) RETURN count(n) AS n", o=who)[0]["n"] == 0
    assert cypher("MATCH (n:Message {owner: $o}) RETURN count(n) AS n", o=other)[0]["n"] == 1
    again = api.delete(f"/v1/owners/{who}", headers=auth()).json()
    assert again["messages"] == 0


def test_bulk_ingest_pipelines_batches(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    batches = [[MessageIn.model_validate(msg(i, who)) for i in range(j, j + 5)]
               for j in range(0, 20, 5)]
    reports = list(memory.ops(tenant).ingest_many(batches))
    assert [r.created for r in reports] == [5, 5, 5, 5]
    assert [r.ids for r in reports] == [[m.id for m in b] for b in batches]
    assert _chain(cypher, tenant, who, "s1") == [f"{who}-s1-{i}" for i in range(20)]
    again = list(memory.ops(tenant).ingest_many(batches))
    assert sum(r.duplicates for r in again) == 20
