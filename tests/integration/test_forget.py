"""Forgetting one message, session, trace or fact on the real Neo4j: what goes, what stays, the
report, the audit record, re-formation, tenant isolation, idempotence, 404, the session budget
and atomicity."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from graphmem.config import key_id
from graphmem.errors import TooLarge
from graphmem.facts.models import FactWrite, ObservationIn
from graphmem.lifecycle.forget import id_hash, session_key
from graphmem.service import Memory
from graphmem.store.forget import ForgetStore
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner
from tests.integration.test_procedural import drain, run

SECRET = "zanzibarquokka"
EVERYTHING = {"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z"}


def obs(who: str, content: str, sources: list[str], **kw: Any) -> ObservationIn:
    return ObservationIn.model_validate({
        "owner": who, "subject": kw.pop("subject", who), "type": kw.pop("type", "note"),
        "content": content, "explicit": False, "sources": sources, **kw})


def facts_on(memory: Memory, t: str, who: str, secret: str,
             shared_by: list[str]) -> tuple[FactWrite, FactWrite, FactWrite]:
    """A fact resting only on the ``secret`` message, one resting only on that fact, and one
    resting on the messages ``shared_by``."""
    only = memory.facts.observe(memory.stores(t), [obs(who, f"locker code {SECRET}", [secret])])[0]
    on_fact = memory.facts.observe(memory.stores(t),
                                   [obs(who, "has a locker", [only.id], type="owns")])[0]
    shared = memory.facts.observe(memory.stores(t),
                                  [obs(who, "travels to Porto", shared_by, type="trip")])[0]
    return only, on_fact, shared


def deletions(api: TestClient, key: str = "key-a") -> list[dict[str, Any]]:
    r = api.get("/v1/audit/deletions", params=EVERYTHING, headers=auth(key))
    assert r.status_code == 200, r.text
    rows: list[dict[str, Any]] = r.json()["rows"]
    return rows


def test_forget_a_message(api: TestClient, memory: Memory, cypher: Any) -> None:
    who, t = owner(), "tenant-a"
    texts = ["We planned the trip to Porto.", "The flight leaves at nine.",
             f"My locker code is {SECRET} 4711.", "Noted, I will remember it.",
             "Also book a hotel near the river.", "Done, the hotel is booked."]
    body = {"messages": [msg(i, who, text=x) for i, x in enumerate(texts)]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    ids = [m["id"] for m in body["messages"]]
    memory.former.form(memory.stores(t), who, "s1")
    only, on_fact, shared = facts_on(memory, t, who, ids[2], [ids[2], ids[0]])
    url = f"/v1/messages/{quote(ids[2], safe='')}"

    assert api.delete(url, headers=auth("key-b")).status_code == 404  # another tenant's
    assert api.get(url, headers=auth()).status_code == 200

    r = api.delete(url, headers=auth())
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["kind"] == "message" and not report["already_forgotten"]
    removed = report["removed"]
    assert removed["messages"] == 1 and removed["sentences"] >= 1
    assert removed["windows"] >= 1 and removed["episodes"] == 1 and removed["facts"] == 2
    assert sorted(report["facts"]) == sorted([only.id, on_fact.id])
    assert len(report["reformation_jobs"]) == 1

    # what is gone
    assert api.get(url, headers=auth()).status_code == 404
    assert cypher("MATCH (n {tenant: $t}) WHERE any(k IN keys(n) WHERE n[k] IS :: STRING "
                  "AND n[k] CONTAINS $s) RETURN labels(n) AS l", t=t, s=SECRET) == []
    # what stays: the chain relinked around it, the session recounted, the shared fact
    chain = cypher("MATCH (a:Message {tenant: $t, id: $a})-[:NEXT]->(b) RETURN b.id AS id",
                   t=t, a=ids[1])
    assert chain == [{"id": ids[3]}]
    assert cypher("MATCH (s:Session {tenant: $t, owner: $o}) RETURN s.message_count AS n",
                  t=t, o=who) == [{"n": 5}]
    src = cypher("MATCH (:Fact {tenant: $t, id: $id})-[:SUPPORTED_BY]->(m) RETURN m.id AS id",
                 t=t, id=shared.id)
    assert src == [{"id": ids[0]}]
    hits = api.post("/v1/search", json={"query": SECRET, "owner": who, "method": "fulltext"},
                    headers=auth()).json()["hits"]
    assert ids[2] not in [h["id"] for h in hits]

    # re-formation: the job committed with the deletion forms the other messages again
    drain(memory, t)
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) WHERE NOT EXISTS "
                  "{ (m)<-[:DERIVED_FROM]-(:Episode) } RETURN m.id AS id", t=t, o=who) == []
    assert cypher("MATCH (w:Window {tenant: $t, owner: $o}) RETURN count(w) AS n",
                  t=t, o=who)[0]["n"] > 0

    # idempotent; unknown ids are 404
    again = api.delete(url, headers=auth()).json()
    assert again["already_forgotten"] and again["removed"] == {}
    assert api.delete("/v1/messages/never-stored", headers=auth()).status_code == 404

    # audited, without the content or the id
    rows = [r for r in deletions(api) if r["id_hash"] == id_hash(ids[2])]
    assert len(rows) == 1 and rows[0]["kind"] == "message"
    assert rows[0]["messages"] == 1 and rows[0]["facts"] == 2
    assert rows[0]["by"] == key_id("key-a")  # who asked: the key's id, never the key
    assert SECRET not in json.dumps(rows) and ids[2] not in json.dumps(rows)
    assert not [r for r in deletions(api, "key-b") if r["id_hash"] == id_hash(ids[2])]
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_forget_a_session(api: TestClient, memory: Memory, cypher: Any) -> None:
    who, t = owner(), "tenant-a"
    s1 = ["We planned the trip to Porto with Ingrid Bergstrom.", "The flight leaves at nine.",
          f"My locker code is {SECRET} 4711.", "Noted, I will remember it."]
    s2 = ["Porto was lovely.", "The hotel near the river was quiet."]
    body = {"messages": [msg(i, who, "chat/1", text=x) for i, x in enumerate(s1)]
            + [msg(i, who, "s2", text=x) for i, x in enumerate(s2, 10)]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    ids = [m["id"] for m in body["messages"]]
    one, two = ids[:4], ids[4:]
    memory.former.form(memory.stores(t), who, "chat/1")
    memory.former.form(memory.stores(t), who, "s2")
    only, on_fact, shared = facts_on(memory, t, who, one[2], [one[0], two[0]])
    url = f"/v1/sessions/{quote('chat/1', safe='')}"
    count = "MATCH (n:Message {tenant: $t, owner: $o}) RETURN count(n) AS n"

    # bad input and other tenants: nothing goes
    r = api.delete(url, headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "owner", r.text
    assert api.delete(url, params={"owner": who}, headers=auth("key-b")).status_code == 404
    assert api.delete(url, params={"owner": "someone-else"}, headers=auth()).status_code == 404
    assert cypher(count, t=t, o=who) == [{"n": 6}]

    r = api.delete(url, params={"owner": who}, headers=auth())
    assert r.status_code == 200, r.text
    report = r.json()
    assert (report["kind"], report["id"], report["owner"]) == ("session", "chat/1", who)
    assert not report["already_forgotten"] and report["reformation_jobs"] == []
    removed = report["removed"]
    assert removed["messages"] == 4 and removed["sessions"] == 1
    assert removed["sentences"] >= 4 and removed["windows"] >= 1 and removed["episodes"] >= 1
    assert removed["entities"] >= 1 and removed["facts"] == 2
    assert sorted(report["facts"]) == sorted([only.id, on_fact.id])

    # what is gone: every trace of the session's content
    assert cypher("MATCH (n {tenant: $t}) WHERE any(k IN keys(n) WHERE n[k] IS :: STRING "
                  "AND (n[k] CONTAINS $s OR toLower(n[k]) CONTAINS 'bergstrom')) "
                  "RETURN labels(n) AS l", t=t, s=SECRET) == []
    assert cypher("MATCH (n {tenant: $t, owner: $o, session_id: 'chat/1'}) RETURN labels(n)",
                  t=t, o=who) == []
    assert api.get(f"{url}/messages", params={"owner": who}, headers=auth()).json() == []
    # what stays: the other session, its episodes chained, the shared fact on its other source,
    # an entity the other session mentions too
    assert cypher(count, t=t, o=who) == [{"n": 2}]
    assert cypher("MATCH (s:Session {tenant: $t, owner: $o}) RETURN s.session_id AS s",
                  t=t, o=who) == [{"s": "s2"}]
    src = cypher("MATCH (:Fact {tenant: $t, id: $id})-[:SUPPORTED_BY]->(m) RETURN m.id AS id",
                 t=t, id=shared.id)
    assert src == [{"id": two[0]}]
    assert cypher("MATCH (n:Entity {tenant: $t, owner: $o, name: 'porto'}) RETURN count(n) AS n",
                  t=t, o=who) == [{"n": 1}]
    episodes = cypher("MATCH (e:Episode {tenant: $t, owner: $o}) RETURN count(e) AS n",
                      t=t, o=who)[0]["n"]
    links = cypher("MATCH (:Episode {tenant: $t, owner: $o})-[r:NEXT]->() RETURN count(r) AS n",
                   t=t, o=who)[0]["n"]
    assert episodes >= 1 and links == episodes - 1
    # a formation job queued for the session before it went finds nothing to form, and fails not
    drain(memory, t)
    assert cypher("MATCH (n {tenant: $t, owner: $o, session_id: 'chat/1'}) RETURN labels(n)",
                  t=t, o=who) == []
    jobs = cypher("MATCH (j:Job {tenant: $t, owner: $o}) RETURN j.state AS s", t=t, o=who)
    assert jobs and {j["s"] for j in jobs} == {"done"}, jobs

    # idempotent; audited like the others, without the content or the ids
    again = api.delete(url, params={"owner": who}, headers=auth()).json()
    assert again["already_forgotten"] and again["removed"] == {} and again["owner"] == who
    assert api.delete("/v1/sessions/never", params={"owner": who},
                      headers=auth()).status_code == 404
    digest = id_hash(session_key(who, "chat/1"))
    rows = [r for r in deletions(api) if r["id_hash"] == digest]
    assert len(rows) == 1 and rows[0]["kind"] == "session" and rows[0]["messages"] == 4
    assert SECRET not in json.dumps(rows) and "chat/1" not in json.dumps(rows)
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_forgetting_a_long_session_is_refused_whole(api: TestClient, memory: Memory,
                                                    cypher: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    who, t = owner(), "tenant-a"
    body = {"messages": [msg(i, who) for i in range(4)]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    monkeypatch.setattr(memory, "settings", memory.settings.model_copy(
        update={"max_forget_session_messages": 3}))
    r = api.delete("/v1/sessions/s1", params={"owner": who}, headers=auth())
    assert r.status_code == 413, r.text
    problem = r.json()
    assert problem["field"] == "session_id" and "3" in problem["detail"]
    with pytest.raises(TooLarge):
        memory.ops(t).forget_session(who, "s1")
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) RETURN count(m) AS n",
                  t=t, o=who) == [{"n": 4}]
    assert not [r for r in deletions(api) if r["id_hash"] == id_hash(session_key(who, "s1"))]
    monkeypatch.undo()
    assert memory.ops(t).forget_session(who, "s1").removed["messages"] == 4
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_forget_a_fact_leaves_history_closed(api: TestClient, memory: Memory,
                                             cypher: Any) -> None:
    who, t = owner(), "tenant-a"
    first = obs(who, "the bridge is open", [], explicit=True, type="status",
                valid_from=datetime(2026, 3, 1, tzinfo=UTC))
    r1 = memory.facts.observe(memory.stores(t), [first])[0]
    r2 = memory.facts.observe(memory.stores(t), [obs(who, "the bridge is closed", [], explicit=True,
                                      type="status",
                                      valid_from=datetime(2026, 3, 5, tzinfo=UTC))])[0]
    assert r2.superseded == [r1.id]
    derived = memory.facts.observe(memory.stores(t),
                                   [obs(who, "take the ferry", [r2.id], type="plan")])[0]

    url = f"/v1/facts/{quote(r2.id, safe='')}"
    assert api.delete(url, headers=auth("key-b")).status_code == 404
    report = api.delete(url, headers=auth()).json()
    assert report["removed"] == {"facts": 2}
    assert sorted(report["facts"]) == sorted([r2.id, derived.id])
    assert report["supersessions"] == 1

    left = memory.facts.query(memory.stores(t), "observation", who, include_history=True)
    assert [f.id for f in left] == [r1.id]
    assert left[0].valid_to == datetime(2026, 3, 5, tzinfo=UTC)  # stays closed: no resurrection
    assert memory.facts.query(memory.stores(t), "observation", who) == []
    assert [f.id for f in memory.facts.history(memory.stores(t), r1.id).facts] == [r1.id]
    for name in ("integrity_two_current", "integrity_overlaps", "integrity_missing_source"):
        assert api.get(f"/v1/audit/{name}", headers=auth()).json()["rows"] == [], name
    assert api.delete(url, headers=auth()).json()["already_forgotten"]
    assert api.delete("/v1/facts/o-unknown", headers=auth()).status_code == 404
    rows = [r for r in deletions(api) if r["id_hash"] == id_hash(r2.id)]
    assert rows and rows[0]["kind"] == "fact" and rows[0]["facts"] == 2
    assert cypher("MATCH (k:FactKey {tenant: $t, owner: $o, type: 'plan'}) RETURN k",
                  t=t, o=who) == []
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_forget_a_trace(api: TestClient, memory: Memory, cypher: Any) -> None:
    who, t = owner(), "tenant-a"
    good = ["get_order", "cancel_order"]
    batch = [run(who, 1, "success", good), run(who, 2, "success", good)]
    ids = api.post("/v1/traces", json={"traces": batch}, headers=auth()).json()["ids"]
    drain(memory, t)
    skills = cypher("MATCH (s:Skill {tenant: $t, owner: $o}) RETURN s.id AS id", t=t, o=who)
    assert len(skills) == 1

    url = f"/v1/traces/{quote(ids[0], safe='')}"
    assert api.delete(url, headers=auth("key-b")).status_code == 404
    report = api.delete(url, headers=auth()).json()
    assert report["removed"]["traces"] == 1 and report["removed"]["steps"] > 0
    assert report["removed"]["cases"] >= 1 and report["removed"]["skills"] == 0
    assert len(report["reformation_jobs"]) == 1
    assert cypher("MATCH (n {tenant: $t}) WHERE n.id = $id OR n.trace_id = $id "
                  "OR n.id STARTS WITH $id + '#' RETURN n", t=t, id=ids[0]) == []
    drain(memory, t)
    detail = api.get(f"/v1/skills/{skills[0]['id']}", headers=auth()).json()
    assert len(detail["supporting"]) == 1

    # the last supporting run goes: the skill resting only on it goes too
    report = api.delete(f"/v1/traces/{quote(ids[1], safe='')}", headers=auth()).json()
    assert report["removed"]["skills"] == 1
    assert cypher("MATCH (s:Skill|Case|Cluster|Step|Trace {tenant: $t, owner: $o}) RETURN s",
                  t=t, o=who) == []
    assert api.delete(url, headers=auth()).json()["already_forgotten"]
    kinds = [r["kind"] for r in deletions(api) if r["id_hash"] in map(id_hash, ids)]
    assert kinds == ["trace", "trace"]
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_forgetting_is_atomic(memory: Memory, tenant: str, cypher: Any,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.models import MessageIn

    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who)) for i in range(3)])

    def broken(*_: Any) -> None:
        raise RuntimeError("audit write failed")

    monkeypatch.setattr(ForgetStore, "_record", broken)
    with pytest.raises(RuntimeError):
        memory.ops(tenant).forget_message(f"{who}-s1-1")
    with pytest.raises(RuntimeError):
        memory.ops(tenant).forget_session(who, "s1")
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) RETURN count(m) AS n",
                  t=tenant, o=who) == [{"n": 3}]
    assert cypher("MATCH (s:Session {tenant: $t, owner: $o}) RETURN count(s) AS n",
                  t=tenant, o=who) == [{"n": 1}]
    assert cypher("MATCH (s:Sentence {tenant: $t, message_id: $id}) RETURN count(s) AS n",
                  t=tenant, id=f"{who}-s1-1") != [{"n": 0}]
