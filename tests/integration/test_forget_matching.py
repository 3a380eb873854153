"""Forgetting the messages a filter chooses on the real Neo4j (POST /v1/messages/forget): an
owner's messages with some metadata across sessions, with their chains relinked, their
sessions formed again, the facts resting only on them, adjacent runs of them, the audit record,
the bound, atomicity, tenants and bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.errors import TooLarge
from graphmem.lifecycle.forget import id_hash
from graphmem.models import ForgetMessages, MessageIn
from graphmem.service import Memory
from graphmem.store.forget import ForgetStore
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner
from tests.integration.test_forget import SECRET, deletions, facts_on
from tests.integration.test_procedural import drain

GMAIL = {"source": "gmail"}


def _talk(who: str) -> list[dict[str, Any]]:
    """Two sessions of six turns; turns 2, 3 (adjacent) and 5 of each came from gmail."""
    rows = []
    for s in ("s1", "s2"):
        for i in range(6):
            text = f"Mail {i} of {s}: the code is {SECRET}." if i in (2, 3, 5) \
                else f"Chat {i} of {s} about the Porto trip."
            rows.append(msg(i, who, session=s, text=text,
                            metadata=GMAIL if i in (2, 3, 5) else {"source": "chat"}))
    return rows


def _chain(cypher: Any, t: str, who: str, session: str) -> list[str]:
    rows = cypher("MATCH (a:Message {tenant: $t, owner: $o, session_id: $s}) "
                  "WHERE NOT EXISTS { (:Message)-[:NEXT]->(a) } "
                  "MATCH p = (a)-[:NEXT*0..]->(z) WHERE NOT EXISTS { (z)-[:NEXT]->() } "
                  "RETURN [n IN nodes(p) | n.id] AS ids", t=t, o=who, s=session)
    assert len(rows) == 1, rows  # one chain per session
    ids: list[str] = rows[0]["ids"]
    return ids


def test_forget_an_owners_messages_by_metadata(api: TestClient, memory: Memory,
                                               cypher: Any) -> None:
    who, t = owner(), "tenant-a"
    body = {"messages": _talk(who)}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    ids = [m["id"] for m in body["messages"]]
    for s in ("s1", "s2"):
        memory.former.form(memory.stores(t), who, s)
    gmail = [m["id"] for m in body["messages"] if m["metadata"] == GMAIL]
    only, on_fact, shared = facts_on(memory, t, who, gmail[0], [gmail[1], ids[0]])
    request = {"owner": who, "metadata": GMAIL}

    other = api.post("/v1/messages/forget", json=request, headers=auth("key-b"))
    assert other.status_code == 200 and other.json()["removed"]["messages"] == 0  # no such owner

    r = api.post("/v1/messages/forget", json=request, headers=auth())
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["kind"] == "messages" and report["owner"] == who
    assert json.loads(report["id"])["metadata"] == GMAIL
    removed = report["removed"]
    assert removed["messages"] == 6 and removed["facts"] == 2 and removed["sessions"] == 0
    assert removed["episodes"] >= 2 and removed["windows"] >= 1
    assert sorted(report["facts"]) == sorted([only.id, on_fact.id])
    assert len(report["reformation_jobs"]) == 2  # one per session left with messages

    # what is gone: every gmail message and everything that held its text
    assert cypher("MATCH (n {tenant: $t}) WHERE any(k IN keys(n) WHERE n[k] IS :: STRING "
                  "AND n[k] CONTAINS $s) RETURN labels(n) AS l", t=t, s=SECRET) == []
    # what stays: the chat turns, chained around the runs that went, sessions recounted
    for s in ("s1", "s2"):
        assert _chain(cypher, t, who, s) == [f"{who}-{s}-{i}" for i in (0, 1, 4)]
    assert cypher("MATCH (s:Session {tenant: $t, owner: $o}) RETURN s.message_count AS n",
                  t=t, o=who) == [{"n": 3}, {"n": 3}]
    src = cypher("MATCH (:Fact {tenant: $t, id: $id})-[:SUPPORTED_BY]->(m) RETURN m.id AS id",
                 t=t, id=shared.id)
    assert src == [{"id": ids[0]}]
    drain(memory, t)  # the sessions form again from what is left
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) WHERE NOT EXISTS "
                  "{ (m)<-[:DERIVED_FROM]-(:Episode) } RETURN m.id AS id", t=t, o=who) == []

    # again: nothing left to match; audited each time, without the filter or the content
    again = api.post("/v1/messages/forget", json=request, headers=auth()).json()
    assert again["removed"]["messages"] == 0
    key = ForgetMessages.model_validate(request).filter_key()
    rows = [r for r in deletions(api) if r["id_hash"] == id_hash(key)]
    assert sorted(r["messages"] for r in rows) == [0, 6]
    assert {r["kind"] for r in rows} == {"messages"}
    assert "gmail" not in json.dumps(rows) and SECRET not in json.dumps(rows)
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_session_and_time_filters_narrow_it(memory: Memory, tenant: str,
                                            cypher: Any) -> None:
    who = owner()
    talk = _talk(who)
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in talk])
    tm = memory.for_tenant(tenant)
    one = tm.messages.forget_matching(ForgetMessages(owner=who, session_id="s2",
                                                     metadata=GMAIL))
    assert one.removed["messages"] == 3
    assert _chain(cypher, tenant, who, "s2") == [f"{who}-s2-{i}" for i in (0, 1, 4)]
    assert len(_chain(cypher, tenant, who, "s1")) == 6
    # time alone: turns 0-2 of both sessions are before T0 + 90 s
    early = tm.messages.forget_matching(ForgetMessages.model_validate(
        {"owner": who, "time_to": talk[3]["timestamp"]}))
    assert early.removed["messages"] == 5  # s1-0, s1-1, s1-2, s2-0, s2-1
    assert _chain(cypher, tenant, who, "s1") == [f"{who}-s1-{i}" for i in (3, 4, 5)]
    # a session left empty goes
    gone = tm.messages.forget_matching(ForgetMessages(owner=who, session_id="s2"))
    assert gone.removed == {**gone.removed, "messages": 1, "sessions": 1}
    assert [s.session_id for s in tm.messages.sessions(who)] == ["s1"]


def test_operators_choose_what_goes(memory: Memory, tenant: str, cypher: Any) -> None:
    """A filter of operators forgets what it passes: turns of s1 with a turn number of 3 or more
    (a range), then everything not from gmail (ne; turns without the key would pass too)."""
    who = owner()
    rows = [msg(i, who, session=s, metadata={"source": "gmail" if i % 2 else "chat", "turn": i})
            for s in ("s1", "s2") for i in range(6)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in rows])
    tm = memory.for_tenant(tenant)
    late = tm.messages.forget_matching(ForgetMessages.model_validate(
        {"owner": who, "session_id": "s1", "metadata": {"turn": {"gte": 3}}}))
    assert late.removed["messages"] == 3
    assert _chain(cypher, tenant, who, "s1") == [f"{who}-s1-{i}" for i in (0, 1, 2)]
    chat = tm.messages.forget_matching(ForgetMessages.model_validate(
        {"owner": who, "metadata": {"source": {"ne": "gmail"}}}))
    assert chat.removed["messages"] == 5  # s1-0, s1-2, s2-0, s2-2, s2-4
    assert _chain(cypher, tenant, who, "s2") == [f"{who}-s2-{i}" for i in (1, 3, 5)]


def test_more_than_the_bound_is_refused_whole(api: TestClient, memory: Memory, cypher: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    who, t = owner(), "tenant-a"
    assert api.post("/v1/messages", json={"messages": _talk(who)},
                    headers=auth()).status_code == 201
    monkeypatch.setattr(memory, "settings", memory.settings.model_copy(
        update={"max_forget_matching_messages": 5}))
    r = api.post("/v1/messages/forget", json={"owner": who, "metadata": GMAIL}, headers=auth())
    assert r.status_code == 413 and r.json()["field"] == "metadata", r.text
    with pytest.raises(TooLarge):
        memory.ops(t).forget_matching(ForgetMessages(owner=who, session_id="s1"))
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) RETURN count(m) AS n",
                  t=t, o=who) == [{"n": 12}]
    r = api.post("/v1/messages/forget", json={"owner": who, "metadata": GMAIL,
                                              "session_id": "s1"}, headers=auth())
    assert r.status_code == 200 and r.json()["removed"]["messages"] == 3
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_it_is_atomic(memory: Memory, tenant: str, cypher: Any,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in _talk(who)])

    def broken(*_: Any) -> None:
        raise RuntimeError("audit write failed")

    monkeypatch.setattr(ForgetStore, "_record", broken)
    with pytest.raises(RuntimeError):
        memory.ops(tenant).forget_matching(ForgetMessages(owner=who, metadata=GMAIL))
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) RETURN count(m) AS n",
                  t=tenant, o=who) == [{"n": 12}]
    assert len(_chain(cypher, tenant, who, "s1")) == 6


def test_bad_requests_name_the_field(api: TestClient) -> None:
    who = owner()
    for body, field in [
        ({"owner": who}, "metadata"),  # no filter: forgetting an owner is DELETE /v1/owners
        ({"metadata": GMAIL}, "owner"),
        ({"owner": who, "metadata": {}}, "metadata"),
        ({"owner": who, "metadata": {"source": {"a": 1}}}, "metadata.source"),
        ({"owner": who, "time_to": "2026-01-01T00:00:00"}, "time_to"),
    ]:
        r = api.post("/v1/messages/forget", json=body, headers=auth())
        assert r.status_code == 422, body
        assert r.json()["field"] == field, (body, r.json())
