"""The export of an owner on the real Neo4j (GET /v1/owners/{owner}/export): everything stored
about an owner (messages, entities, episodes, facts with their history, runs with their steps,
cases, clusters, skills, document versions, their sections, topics), closed under its links,
paged without loss or repeat, bound to the tenant, each page read through an index in id order;
bad input and unknown owners."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from graphmem import cypher as named
from graphmem.cli import app
from graphmem.documents.models import DocumentIn
from graphmem.errors import Conflict
from graphmem.facts.models import ObservationIn, ProfileOp
from graphmem.lifecycle.export import KINDS, LEFT_OUT
from graphmem.models import MessageIn
from graphmem.service import Memory

from .conftest import auth
from .helpers import msg
from .helpers import owner as new_owner
from .test_procedural import drain, run


def _records(api: TestClient, who: str, limit: int, key: str = "key-a") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = ""
    while True:
        r = api.get(f"/v1/owners/{who}/export", params={"after": after, "limit": limit},
                    headers=auth(key))
        assert r.status_code == 200, r.text
        page = r.json()
        assert page["owner"] == who and len(page["records"]) <= limit
        out += page["records"]
        if page["next"] is None:
            return out
        after = page["next"]


def _fill(api: TestClient, memory: Memory, who: str) -> list[dict[str, Any]]:
    """Two formed sessions with metadata, a fact revised once, and three agent runs formed into
    cases and a skill."""
    messages = [msg(i, who, session=s, text=f"Turn {i} of {s}: Ana flies to Porto on Friday.",
                    metadata={"channel": s, "n": i})
                for s in ("s1", "s2") for i in range(3)]
    assert api.post("/v1/messages", json={"messages": messages},
                    headers=auth()).status_code == 201
    for s in ("s1", "s2"):
        memory.former.form(memory.stores("tenant-a"), who, s)
    memory.facts.observe(memory.stores("tenant-a"), [ObservationIn.model_validate({
        "owner": who, "subject": who, "type": "home", "content": "lives in Lisbon",
        "cardinality": "single", "valid_from": "2024-01-01T00:00:00Z",
        "sources": [messages[0]["id"]]})])
    memory.facts.observe(memory.stores("tenant-a"), [ObservationIn.model_validate({
        "owner": who, "subject": who, "type": "home", "content": "lives in Porto",
        "cardinality": "single", "valid_from": "2024-06-01T00:00:00Z",
        "sources": [messages[1]["id"]]})])
    good = ["get_order", "cancel_order"]
    batch = [run(who, 1, "success", good), run(who, 2, "success", good),
             run(who, 3, "failure", ["get_order", "refund_order"])]
    assert api.post("/v1/traces", json={"traces": batch}, headers=auth()).status_code == 201
    drain(memory, "tenant-a")
    docs = memory.for_tenant("tenant-a").documents
    docs.ingest(DocumentIn(owner=who, key="notes.md", media_type="text/markdown",
                           content="# Trips\n\nAna flies to Porto on Friday.\n"))
    docs.ingest(DocumentIn(owner=who, key="notes.md", media_type="text/markdown",
                           content="# Trips\n\nAna flies to Lisbon on Friday.\n",
                           reason="plans changed"))
    docs.build_topics(who)
    return messages


def test_an_owners_export_holds_everything_closed_under_its_links(api: TestClient,
                                                                  memory: Memory) -> None:
    who = new_owner()
    messages = _fill(api, memory, who)
    records = _records(api, who, limit=7)
    assert records == _records(api, who, limit=1000)  # pages lose and repeat nothing
    keys = [(r["kind"], r["id"]) for r in records]
    assert keys == sorted(keys, key=lambda k: (KINDS.index(k[0]), k[1]))  # export order
    assert len(set(keys)) == len(keys)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_kind.setdefault(r["kind"], []).append(r)
    assert set(by_kind) == set(KINDS)
    # messages as sent: text, metadata decoded, event time in UTC; nothing of the indexes
    sent = {m["id"]: m for m in messages}
    assert {r["id"] for r in by_kind["message"]} == set(sent)
    for r in by_kind["message"]:
        p = r["properties"]
        assert p["text"] == sent[r["id"]]["text"] and p["metadata"] == sent[r["id"]]["metadata"]
        assert p["timestamp"].endswith("Z") and p["owner"] == who
    for r in records:
        assert not LEFT_OUT & set(r["properties"]), r
        assert not any(k.endswith("_json") for k in r["properties"])
    # the fact's history: both versions, the later one SUPERSEDES the first, with its reason
    facts = {r["properties"]["content"]: r for r in by_kind["fact"]}
    first, later = facts["lives in Lisbon"], facts["lives in Porto"]
    assert first["properties"]["valid_to"] == "2024-06-01T00:00:00Z"
    sup = [x for x in later["links"] if x["type"] == "SUPERSEDES"]
    assert [(x["kind"], x["id"]) for x in sup] == [("fact", first["id"])]
    assert sup[0]["properties"]["reason"]
    assert ("SUPPORTED_BY", "message", messages[1]["id"]) in {
        (x["type"], x["kind"], x["id"]) for x in later["links"]}
    # runs: every step with its trace; cases with their cluster; the skill's support
    assert len(by_kind["trace"]) == 3
    assert all(any(x["type"] == "HAS_STEP" and x["direction"] == "in" for x in s["links"])
               for s in by_kind["step"])
    supports = [x for c in by_kind["case"] for x in c["links"] if x["type"] == "SUPPORTED_BY"]
    assert len(supports) >= 2 and all(x["kind"] == "skill" for x in supports)
    assert isinstance(by_kind["skill"][0]["properties"]["steps"], list)
    # every link leads to a record of the same export
    for r in records:
        for x in r["links"]:
            assert (x["kind"], x["id"]) in set(keys), (r["kind"], r["id"], x)


def test_an_export_is_bound_to_the_tenant(api: TestClient, memory: Memory) -> None:
    who = new_owner()
    assert api.post("/v1/messages", json={"messages": [msg(0, who, text="tenant a's turn")]},
                    headers=auth()).status_code == 201
    r = api.get(f"/v1/owners/{who}/export", headers=auth("key-b"))
    assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
    theirs = {"messages": [msg(0, who, text="tenant b's turn", id="b-only")]}
    assert api.post("/v1/messages", json=theirs, headers=auth("key-b")).status_code == 201
    texts = [x["properties"]["text"] for x in _records(api, who, 10, key="key-b")
             if x["kind"] == "message"]
    assert texts == ["tenant b's turn"]
    assert [x["id"] for x in _records(api, who, 10) if x["kind"] == "message"] == [
        f"{who}-s1-0"]


def test_export_bad_input_and_unknown_owners(api: TestClient, memory: Memory) -> None:
    who = f"team/{new_owner()}"  # a name holding "/"
    assert api.post("/v1/messages", json={"messages": [msg(0, who)]},
                    headers=auth()).status_code == 201
    path = f"/v1/owners/{who.replace('/', '%2F')}/export"
    assert api.get(path, headers=auth()).json()["records"][0]["properties"]["owner"] == who
    for params, field in (({"after": "bogus"}, "after"), ({"limit": 0}, "limit"),
                          ({"limit": 1001}, "limit")):
        r = api.get(path, params=params, headers=auth())
        assert r.status_code == 422 and r.json()["field"] == field, r.text
    last = api.get(path, params={"after": "skill:~"}, headers=auth()).json()
    assert (last["records"], last["next"]) == ([], None)  # past the end: empty, not a 404
    assert api.get(f"/v1/owners/{new_owner()}/export", headers=auth()).status_code == 404
    assert api.delete(path.removesuffix("/export"), headers=auth()).status_code == 200
    assert api.get(path, headers=auth()).status_code == 404  # forgotten: nothing to export
    assert api.get(path, headers={}).status_code == 401


@pytest.mark.parametrize("kind", KINDS)
def test_an_export_page_reads_its_own_size(memory: Memory, kind: str) -> None:
    """Each kind's read seeks the (tenant, owner, id) index from the cursor and stops at the
    page's limit: no sort of the owner's nodes, no label scan."""
    query = named.load(f"queries/export/{kind}")
    params: dict[str, Any] = dict.fromkeys(re.findall(r"\$(\w+)", query))
    params.update(tenant="t", owner="o", after="", limit=10)
    with memory.store._driver.session(database=memory.settings.neo4j_database) as session:
        plan = session.run("EXPLAIN " + query, params).consume().plan
    ops = _operators(plan)
    assert "Limit" in ops and not {"Sort", "Top", "PartialSort", "PartialTop"} & set(ops), ops
    assert not [op for op in ops if "Scan" in op], ops


def _operators(plan: Any) -> list[str]:
    return [plan["operatorType"].split("@")[0],
            *(op for child in plan.get("children", []) for op in _operators(child))]


def test_the_facade_walks_every_page(memory: Memory) -> None:
    who = new_owner()
    tm = memory.for_tenant("tenant-a")
    tm.messages.ingest([MessageIn.model_validate(msg(i, who)) for i in range(5)])
    got = [r.id for r in tm.export_all(who, limit=2) if r.kind == "message"]
    assert got == sorted(f"{who}-s1-{i}" for i in range(5))
    page = tm.export(who, limit=2)
    assert page.next == f"message:{who}-s1-1" and page.exported_at <= datetime.now(UTC)


def test_an_export_stored_again_in_another_tenant_gives_the_same_memory(
        api: TestClient, memory: Memory, env: None, tmp_path: Path) -> None:
    """`graphmem export`, then `graphmem ingest --format export` into another tenant: the same
    messages and runs (their steps to the property), the same facts with their history as
    recorded (times, sources, revisions; the integrity audits find nothing), the rest formed
    again by the jobs; a second import stores nothing new."""
    who = new_owner()
    _fill(api, memory, who)
    runner = CliRunner()
    out = tmp_path / "export.jsonl"
    r = runner.invoke(app, ["export", "--owner", who, "--tenant", "tenant-a", "--out", str(out)])
    assert r.exit_code == 0, r.output
    target = f"t-{uuid.uuid4().hex[:10]}"
    r = runner.invoke(app, ["ingest", str(out), "--format", "export", "--tenant", target])
    assert r.exit_code == 0, r.output
    assert ("6 messages (6 new), 2 fact versions (2 new), 3 runs (3 new) and 2 document "
            "versions (2 new)") in r.stdout
    drain(memory, target)
    before = _records(api, who, 1000)
    after = [r.model_dump(mode="json") for r in memory.for_tenant(target).export_all(who)]
    # how each came in: when, from whom, in which batch
    sent_again = {"recorded_at", "recorded_by", "batch", "batch_index", "content_hash"}

    def same(kind: str, records: list[dict[str, Any]], links: bool = False) -> list[Any]:
        return sorted((r["id"], {k: v for k, v in r["properties"].items()
                                 if kind == "fact" or k not in sent_again},
                       r["links"] if links else None) for r in records if r["kind"] == kind)

    for kind in ("message", "trace", "step"):
        assert same(kind, after) == same(kind, before), kind
    for kind in ("document", "section"):  # as recorded
        assert sorted(map(str, [r for r in after if r["kind"] == kind])) == sorted(
            map(str, [r for r in before if r["kind"] == kind])), kind
    assert same("fact", after, links=True) == same("fact", before, links=True)
    assert {"episode", "entity", "case", "skill"} <= {r["kind"] for r in after}
    tm = memory.for_tenant(target)
    for name in ("integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes",
                 "integrity_missing_source"):
        assert tm.audit.run(name, {}).rows == [], name
    assert [f.content for f in tm.facts.query(who)] == ["lives in Porto"]
    r = runner.invoke(app, ["ingest", str(out), "--format", "export", "--tenant", target])
    assert r.exit_code == 0, r.output
    assert ("6 messages (0 new), 2 fact versions (0 new), 3 runs (0 new) and 2 document "
            "versions (0 new)") in r.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text().splitlines()[0] + "\n{\"kind\": \"nothing\"}\n")
    r = runner.invoke(app, ["ingest", str(bad), "--format", "export", "--tenant", target])
    assert r.exit_code == 2 and ":2:" in r.stderr


def test_a_profile_comes_back_as_recorded_and_a_type_of_the_other_kind_is_refused(
        memory: Memory) -> None:
    who, key = new_owner(), f"city_{uuid.uuid4().hex[:6]}"
    source = memory.for_tenant("tenant-a")
    source.profile.apply([ProfileOp(op="ADD", owner=who, key=key, value="Lisbon",
                                    valid_from=datetime(2024, 1, 1, tzinfo=UTC)),
                          ProfileOp(op="UPDATE", owner=who, key=key, value="Porto",
                                    valid_from=datetime(2024, 6, 1, tzinfo=UTC)),
                          ProfileOp(op="DELETE", owner=who, key=key,
                                    valid_from=datetime(2025, 1, 1, tzinfo=UTC))])
    records = list(source.export_all(who))
    target = memory.for_tenant(f"t-{uuid.uuid4().hex[:10]}")
    assert target.facts.restore(records) == (3, 0)
    assert target.facts.restore(records) == (0, 3)  # stored once

    def seen(tm: Any, **at: Any) -> list[tuple[Any, ...]]:
        return [(f.id, f.content, f.valid_from, f.valid_to, f.recorded_at)
                for f in tm.profile.get(who, include_history=True, **at)]

    assert seen(target) == seen(source) and len(seen(source)) == 3
    june = datetime(2024, 7, 1, tzinfo=UTC)
    assert [f.content for f in target.profile.get(who, as_of=june)] == ["Porto"]
    assert target.facts.history(records[-1].id) == source.facts.history(records[-1].id)
    source.facts.observe([ObservationIn(owner=who, subject="x", type=key, content="a",
                                        cardinality="single")])
    records = list(source.export_all(who))
    other = memory.for_tenant(f"t-{uuid.uuid4().hex[:10]}")  # the type used otherwise there
    other.facts.observe([ObservationIn(owner="someone", subject="y", type=key, content="b",
                                       cardinality="multi")])
    with pytest.raises(Conflict, match="single-valued in the export"):
        other.facts.restore(records)
    assert other.profile.get(who, include_history=True) == []  # nothing restored


def test_facts_resting_on_facts_of_a_later_batch_are_linked(memory: Memory,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            cypher: Any) -> None:
    who = new_owner()
    source = memory.for_tenant("tenant-a")
    facts = [source.facts.observe([ObservationIn(owner=who, subject=who, type=f"t{i}",
                                                 content=f"value {i}")])[0] for i in range(3)]
    for i in range(3):  # each rests on the others: whatever the order, some come later
        source.facts.observe([ObservationIn(owner=who, subject=who, type=f"u{i}",
                                            content="derived", explicit=False,
                                            sources=[f.id for f in facts])])
    monkeypatch.setattr("graphmem.facts.service.RESTORE_BATCH", 1)  # one chain a transaction
    target = f"t-{uuid.uuid4().hex[:10]}"
    assert memory.for_tenant(target).facts.restore(list(source.export_all(who))) == (6, 0)
    rows = cypher("MATCH (f:Fact {tenant: $t})-[:SUPPORTED_BY]->(g:Fact) RETURN count(*) AS n",
                  t=target)
    assert rows[0]["n"] == 9
