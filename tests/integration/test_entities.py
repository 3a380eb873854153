"""Entities on the real store: mentions written with the messages, the ``graph`` search method's
PageRank list, tenant isolation of entities, and forgetting an owner."""

from __future__ import annotations

from typing import Any

from graphmem import audit
from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store.entities import EntityStore
from tests.integration.helpers import msg, owner

TALK = [
    (0, "s1", "I signed up for pottery classes with Ana last week."),
    (1, "s1", "That sounds relaxing! What are you making?"),
    (2, "s1", "A blue bowl for my mom, the glaze is tricky."),
    (3, "s1", "Good luck with it."),
    (4, "s2", "The kiln at the studio broke, so Ana fired my bowl at her place."),
    (5, "s2", "Nice of her! Did it survive?"),
    (6, "s2", "Yes, no cracks at all."),
    (7, "s3", "We hiked to the lake on Sunday."),
    (8, "s3", "The weather was perfect for it."),
]


def _ingest(memory: Memory, tenant: str, who: str, talk: list[tuple[int, str, str]] = TALK,
            prefix: str = "") -> None:
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(
        msg(i, who, session=s, text=t, id=f"{prefix}{who}-{i}")) for i, s, t in talk])


def _entities(cypher: Any, tenant: str, who: str) -> dict[str, dict[str, Any]]:
    rows = cypher("MATCH (e:Entity {tenant: $tenant, owner: $owner}) "
                  "RETURN e.name AS name, e.kind AS kind, "
                  "[(e)<-[:MENTIONS]-(m:Message) | m.id] AS messages",
                  tenant=tenant, owner=who)
    return {r["name"]: r for r in rows}


def test_ingest_writes_entities_and_mentions(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    found = _entities(cypher, tenant, who)
    assert found["ana"]["kind"] == "name"
    assert sorted(found["ana"]["messages"]) == [f"{who}-0", f"{who}-4"]
    assert found["alice"]["kind"] == "speaker" and len(found["alice"]["messages"]) == 5
    assert found["2023-05"]["kind"] == "date"  # "last week" said on 2023-05-08
    assert set(found["bowl"]["messages"]) == {f"{who}-2", f"{who}-4"}
    assert found["pottery class"]["kind"] == "topic"
    _ingest(memory, tenant, who)  # a repeated batch adds nothing
    assert _entities(cypher, tenant, who) == found


def test_walk_links_are_stored_for_the_walk_but_never_listed(memory: Memory, tenant: str,
                                                            cypher: Any) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    found = _entities(cypher, tenant, who)
    # "pottery classes" and "the kiln at the studio": each noun a link; "hiked" a verb link
    assert found["noun:pottery"]["kind"] == found["verb:hike"]["kind"] == "link"
    assert found["noun:class"]["messages"] == [f"{who}-0"]
    listed = memory.store.run("audit/owner_entities", tenant=tenant, owner=who)
    assert {r["entity"] for r in listed} == {n for n, e in found.items() if e["kind"] != "link"}
    exported = list(memory.for_tenant(tenant).export_all(who, limit=1000))
    assert {r.id for r in exported if r.kind == "entity"} == {r["entity"] for r in listed}
    assert not {x.id for r in exported for x in r.links if x.type == "MENTIONS"} - {
        r["entity"] for r in listed}


def test_graph_method_adds_the_pagerank_list(memory: Memory, tenant: str) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    req = SearchRequest(query="What did Ana do with the bowl?", owner=who, method="graph",
                        max_messages=6)
    timings: dict[str, float] = {}
    res = memory.ops(tenant).search_units(req, timings=timings)
    assert res.method == "graph" and res.hits
    assert any("graph" in h.rules for h in res.hits)
    assert "rerank" in timings  # its own learned ranker: the lists and the PageRank list
    ids = {h.id for h in res.hits}
    assert f"{who}-4" in ids  # the kiln turn: Ana and the bowl
    plain = memory.ops(tenant).search_units(req.model_copy(update={"method": "rrf_expand"}))
    assert all("graph" not in h.rules for h in plain.hits)
    # preset deep: the walk joins rrf_windows (and any expanding method) too
    timings = {}
    deep = memory.ops(tenant).search_units(req.model_copy(update={"method": "rrf_windows",
                                                        "preset": "deep"}), timings=timings)
    assert "rerank" in timings
    assert any("graph" in h.rules for h in deep.hits) and f"{who}-4" in {h.id for h in deep.hits}


def test_entities_are_bound_to_their_tenant(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    other = tenant + "-b"
    _ingest(memory, tenant, who)
    _ingest(memory, other, who, [(0, "s9", "We hiked to the lake on Sunday."),
                                 (1, "s9", "The weather was perfect.")], prefix="b-")
    b_names = set(_entities(cypher, other, who))
    assert "ana" not in b_names and "pottery" not in b_names
    # tenant B never reads tenant A's entities or messages, by name or by id
    got = EntityStore(memory.store, other).neighbourhood(
        who, [f"{who}-0", f"{who}-4"], ["ana", "pottery"], 30, 40, 10)
    assert got["messages"] == [] and got["entities"] == [] and got["mentions"] == []
    res = memory.ops(other).search_units(SearchRequest(query="Ana pottery bowl kiln", owner=who,
                                             method="graph", max_messages=10))
    assert {h.id for h in res.hits} <= {f"b-{who}-0", f"b-{who}-1"}
    # tenant A's own reads see them
    mine = EntityStore(memory.store, tenant).neighbourhood(who, [f"{who}-0"], ["ana"], 30, 40, 10)
    assert {e["name"] for e in mine["entities"] if e["query"]} == {"ana"}
    assert f"{who}-4" in {m["id"] for m in mine["messages"]}


def test_forgetting_an_owner_removes_entities(memory: Memory, tenant: str,
                                              cypher: Any) -> None:
    who, kept = owner(), owner()
    _ingest(memory, tenant, who)
    _ingest(memory, tenant, kept)
    report = memory.ops(tenant).delete_owner(who)
    assert report.entities > 0
    assert _entities(cypher, tenant, who) == {}
    assert cypher("MATCH (:Message {tenant: $tenant, owner: $owner})-[r:MENTIONS]->() "
                  "RETURN count(r) AS n", tenant=tenant, owner=who)[0]["n"] == 0
    assert "ana" in _entities(cypher, tenant, kept)


def test_forgetting_steps_leave_entities_until_the_messages_are_gone(
        memory: Memory, tenant: str, cypher: Any) -> None:
    """An entity of a large owner is a hub: a step that deleted it first would take all its
    MENTIONS edges in one transaction (a 200,000-message owner ran Neo4j out of transaction
    memory that way). Entities go in the steps after the last message."""
    who = owner()
    _ingest(memory, tenant, who)
    store = memory.store.tenant(tenant)
    steps = []
    while True:
        row = store._run("queries/owners/delete_owner_step", write=True, owner=who, limit=4)[0]
        if not any(row.values()):
            break
        steps.append(row)
    assert [s["messages"] for s in steps][:3] == [4, 4, 1]
    assert steps[0]["entities"] == steps[1]["entities"] == 0  # messages still left after them
    assert sum(s["entities"] for s in steps) > 0 and _entities(cypher, tenant, who) == {}


def test_owner_entities_audit_query(memory: Memory, tenant: str) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    q = audit.get("owner_entities")
    assert set(q.params) == {"tenant", "owner"}
    rows = memory.store.run("audit/owner_entities", tenant=tenant, owner=who)
    by_name = {r["entity"]: r for r in rows}
    assert by_name["ana"]["mentions"] == 2
    assert by_name["ana"]["first_messages"] == [f"{who}-0", f"{who}-4"]
    assert by_name["ana"]["by_month"] == [["2023-05", 2]]
    assert rows[0]["mentions"] >= rows[-1]["mentions"]
