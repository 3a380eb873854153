"""Search filtered by message metadata on the real store: every method returns only messages
whose metadata matches (hits and the neighbours expansion adds), a rare value is still found
among many others, numbers match as JSON reads them, hits carry their metadata, context holds
only messages, bad filters are a 422 naming the field, and a database whose messages predate
the filter is migrated."""

from __future__ import annotations

import random
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.messages.metadata import condition, matches
from graphmem.messages.metadata import pairs as pairs_of
from graphmem.messages.metadata import tokens as tokens_of
from graphmem.models import ContextRequest, MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store import Filters
from graphmem.store import metadata as migration
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner

TOPICS = ["the cello lesson moved to Friday", "our hike to the glacier on Sunday",
          "the bakery sells rye bread", "the train to Porto was late",
          "planting tomatoes and basil", "the chess tournament final"]
CHANNELS = ("slack", "email", "sms")
METHODS = ("vector", "fulltext", "rrf", "rrf_expand", "rrf_windows", "iterative", "graph")


def _talk(who: str, sessions: int = 2) -> list[MessageIn]:
    """Turns about the same topics on three channels, interleaved, with priorities 1-3; every
    seventh turn has no metadata at all."""
    rows = []
    for s in range(sessions):
        for i in range(18):
            meta: dict[str, Any] = {"channel": CHANNELS[i % 3], "priority": 1 + i % 3 * 1.0,
                                    "urgent": i % 2 == 0}
            if i % 7 == 6:
                meta = {}
            rows.append(msg(i, who, session=f"s{s}", metadata=meta,
                            text=f"Turn {i}: about {TOPICS[i % len(TOPICS)]}."))
    return [MessageIn.model_validate(r) for r in rows]


def _stored(memory: Memory, tenant: str, who: str, sessions: int = 2) -> list[MessageIn]:
    talk = _talk(who, sessions)
    memory.ops(tenant).ingest_messages(talk)
    for s in range(sessions):
        memory.former.form(memory.stores(tenant), who, f"s{s}")  # windows, for rrf_windows
    return talk


@pytest.mark.parametrize("method", METHODS)
def test_every_method_returns_only_matching_messages(memory: Memory, tenant: str,
                                                     method: str) -> None:
    who = owner()
    _stored(memory, tenant, who)
    plain = memory.ops(tenant).search_units(SearchRequest(query="cello lesson on Friday", owner=who,
                                                method=method, k=5))  # type: ignore[arg-type]
    assert {h.metadata.get("channel") for h in plain.hits} > {"slack"}  # mixed without a filter
    res = memory.ops(tenant).search_units(SearchRequest(
        query="cello lesson on Friday", owner=who, method=method, k=5,  # type: ignore[arg-type]
        metadata={"channel": "slack"}))
    assert res.hits
    assert all(h.metadata["channel"] == "slack" for h in res.hits), method
    assert any("cello" in h.text for h in res.hits if h.nucleus)


def test_neighbours_are_held_to_the_filter_and_hits_carry_metadata(memory: Memory,
                                                                   tenant: str) -> None:
    who = owner()
    talk = _stored(memory, tenant, who)
    res = memory.ops(tenant).search_units(SearchRequest(
        query="the train to Porto", owner=who, k=3, expand={"before": 3, "after": 3},
        metadata={"channel": ["email", "sms"]}))
    sent = {m.id: m.metadata for m in talk}
    assert res.hits and any(h.window for h in res.hits)  # expansion ran
    every = [*res.hits, *(t for h in res.hits for t in h.window)]
    for h in every:
        assert h.metadata == sent[h.id] and h.metadata["channel"] in ("email", "sms")
    assert "slack" not in {sent[h.id].get("channel") for h in every}


def test_numbers_match_as_json_reads_them(memory: Memory, tenant: str) -> None:
    who = owner()
    _stored(memory, tenant, who)

    def found(**filter_: Any) -> set[Any]:
        res = memory.ops(tenant).search_units(SearchRequest(query="tomatoes and basil", owner=who,
                                                  k=50, method="rrf", metadata=filter_))
        return {tuple(sorted(h.metadata.items())) for h in res.hits}

    ones = found(priority=1)  # stored as 1.0: the same number
    assert ones and all(dict(m)["priority"] == 1 for m in ones)
    assert {dict(m)["priority"] for m in found(priority=[1, 3.0])} == {1, 3}
    assert found(urgent=1) == set()  # true is not 1
    assert {dict(m)["urgent"] for m in found(urgent=True)} == {True}
    both = found(channel="sms", urgent=True)  # every key must match
    assert both and all(dict(m)["channel"] == "sms" and dict(m)["urgent"] for m in both)


def test_a_rare_value_is_found_among_many_others(memory: Memory, tenant: str) -> None:
    """Two matching messages among 300 about the same thing: the index's first fetch holds
    neither, the exact scan finds both."""
    who = owner()
    rows = [msg(i, who, text=f"Reminder {i}: the cello lesson moved to Friday.",
                metadata={"source": "import" if i in (17, 251) else "chat"})
            for i in range(300)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])
    for method in ("vector", "fulltext", "rrf", "rrf_expand"):
        res = memory.ops(tenant).search_units(SearchRequest(
            query="cello lesson", owner=who, k=5, method=method,  # type: ignore[arg-type]
            metadata={"source": "import"}))
        assert {h.id for h in res.hits} == {f"{who}-s1-17", f"{who}-s1-251"}, method


def test_a_selective_filter_reads_its_messages_from_the_metadata_index(
        memory: Memory, tenant: str, cypher: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact recall of a selective filter starts from the metadata index (the sentences of
    the messages it names), not from every sentence of the owner, and finds what the scan
    finds; a message of another owner or tenant with the same metadata is not among them."""
    who = owner()
    rows = [msg(i, who, text=f"Note {i} on {TOPICS[i % len(TOPICS)]}.",
                metadata={"folder": f"f{i % 25}", "n": i}) for i in range(200)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])
    other = [msg(i, owner(), text=r["text"], metadata=r["metadata"])
             for i, r in enumerate(rows[:50])]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in other])
    memory.ops(f"{tenant}-x").ingest_messages([MessageIn.model_validate(r) for r in rows[:50]])
    store = memory.store.tenant(tenant)
    vector = memory.embedder.embed(["the glacier hike"])[0]
    read: list[str] = []
    run = store._run_plain
    monkeypatch.setattr(store, "_run_plain",
                        lambda name, **kw: read.append(name) or run(name, **kw))
    for wanted in ({"folder": "f3"}, {"folder": ["f3", "f4"], "n": [3, 4, 28, 29, 53]}):
        filters = Filters(metadata=condition(wanted))
        params = {"owner": who, "vector": vector, **filters.params()}
        read.clear()
        got = store._exact_vector(10, params)
        assert read == ["queries/recall/vector_search_metadata"]
        scan = run("queries/recall/vector_search_exact", k=10, **params)
        assert got == [(r["id"], r["score"]) for r in scan] and got
        assert all(i.startswith(f"{who}-") for i, _ in got)
    memory.for_tenant(f"{tenant}-x").messages.forget_owner(rows[0]["owner"])


def test_context_holds_only_matching_messages(memory: Memory, tenant: str) -> None:
    who = owner()
    _stored(memory, tenant, who)
    req = ContextRequest(query="the chess tournament", owner=who, metadata={"channel": "email"})
    assert req.units == ["message"]
    ctx = memory.for_tenant(tenant).context(req)
    assert ctx.items and {i.unit for i in ctx.items} == {"message"}
    stored = {m.id: m.metadata for m in _talk(who)}
    assert all(stored[i.id]["channel"] == "email" for i in ctx.items)
    assert all(i.metadata == stored[i.id] for i in ctx.items)  # items carry their metadata


def test_bad_filters_are_a_422_naming_the_field(api: TestClient) -> None:
    who = owner()
    for body, field in [
        ({"metadata": {"channel": {"a": 1}}}, "metadata.channel"),
        ({"metadata": {}}, "metadata"),
        ({"metadata": {"channel": []}}, "metadata.channel"),
        ({"metadata": {f"k{i}": 1 for i in range(17)}}, "metadata"),
        ({"metadata": {"channel": "slack"}, "units": "episodes"}, "metadata"),
        ({"metadata": {"priority": {"gte": "2"}}}, "metadata.priority"),
        ({"metadata": {"priority": {"above": 2}}}, "metadata.priority"),
    ]:
        r = api.post("/v1/search", json={"query": "q", "owner": who, **body}, headers=auth())
        assert r.status_code == 422, body
        assert r.json()["field"].startswith(field), (body, r.json())
    r = api.post("/v1/context", json={"query": "q", "owner": who, "units": ["message", "fact"],
                                      "metadata": {"channel": "slack"}}, headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "metadata"


def test_search_over_http_filters_and_returns_metadata(api: TestClient) -> None:
    who = owner()
    body = [msg(i, who, text=f"note {i} about the glacier hike",
                metadata={"channel": "slack" if i % 2 else "email"}) for i in range(6)]
    assert api.post("/v1/messages", json={"messages": body}, headers=auth()).status_code == 201
    r = api.post("/v1/search", json={"query": "glacier hike", "owner": who, "k": 3,
                                     "metadata": {"channel": "email"}}, headers=auth())
    assert r.status_code == 200
    hits = r.json()["hits"]
    assert hits and all(h["metadata"] == {"channel": "email"} for h in hits)
    r = api.post("/v1/search", json={"query": "glacier hike", "owner": who, "k": 6,
                                     "metadata": {"channel": {"ne": "email"}}}, headers=auth())
    assert {h["metadata"]["channel"] for h in r.json()["hits"]} == {"slack"}
    assert api.delete(f"/v1/owners/{who}", headers=auth()).status_code == 200


def test_messages_stored_before_filters_are_migrated(memory: Memory, tenant: str,
                                                     cypher: Any) -> None:
    who = owner()
    _stored(memory, tenant, who, sessions=1)
    cypher("MATCH (n:Message|Sentence {tenant: $tenant}) REMOVE n.metadata_pairs, "
           "n.metadata_tokens", tenant=tenant)
    cypher("MATCH (g:GraphMeta {key: 'metadata_index'}) DELETE g")
    req = SearchRequest(query="the bakery", owner=who, k=3, metadata={"channel": "slack"})
    assert memory.ops(tenant).search_units(req).hits == []  # unmigrated: nothing matches
    migrated = migration.migrate(memory.store)
    assert migrated >= 15  # this tenant's 15 messages with metadata (others' may be pending too)
    left = cypher("MATCH (n:Message|Sentence {tenant: $tenant}) WHERE n.metadata_pairs IS NULL "
                  "AND NOT (n:Message AND n.metadata_json = '{}') "
                  "AND NOT EXISTS { (n)-[:PART_OF]->(:Message {metadata_json: '{}'}) } "
                  "RETURN count(n) AS n", tenant=tenant)
    assert left == [{"n": 0}]
    hits = memory.ops(tenant).search_units(req).hits
    assert hits and all(h.metadata["channel"] == "slack" for h in hits)
    tokens = cypher("MATCH (m:Message {tenant: $tenant}) WHERE m.metadata_json <> '{}' "
                    "RETURN m.metadata_tokens AS t, m.metadata_pairs AS p", tenant=tenant)
    assert all(r["t"] == tokens_of(tenant, who, r["p"]) for r in tokens)
    assert migration.migrate(memory.store) == 0  # marked done


def test_a_filter_passing_a_sixth_reads_the_index_again_not_every_sentence(
        memory: Memory, tenant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Short after its first read but with a sixth of what it wanted, the vector list reads the
    index again with a larger fetch (not the exact scan; where the index filters by owner), and
    finds what the exact scan finds."""
    who = owner()
    rows = [msg(i, who, text=f"Note {i} on {TOPICS[i % len(TOPICS)]}.",
                metadata={"shelf": i // 6 % 6}) for i in range(240)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])
    store = memory.store.tenant(tenant)
    filters = Filters(metadata=condition({"shelf": 2}))
    vector = memory.embedder.embed(["the chess tournament"])[0]
    read: list[str] = []
    run = store._run_plain
    monkeypatch.setattr(store, "_run_plain",
                        lambda name, **params: read.append(name) or run(name, **params))
    got = store.vector_search(who, vector, 10, 4, filters)
    exact = store._exact_vector(10, {"owner": who, "vector": vector, **filters.params()})
    assert {i for i, _ in got} == {i for i, _ in exact} and len(got) == 10
    if memory.store.vector_filters:  # on 5.x the index's first read is the tenant's, not the
        # owner's: what it lets through depends on the other tests' data
        assert read[:-1] == ["queries/recall/vector_search"] * 2  # the last read is the check's


def test_random_filters_find_what_the_exact_scan_finds(memory: Memory, tenant: str) -> None:
    """Random metadata on 150 messages, 25 random filters (one to three keys, one or more
    values each): the vector list under each filter, whichever way it found its k (the index
    read once, read again, or the metadata index), holds the exact scan's best messages (on
    Neo4j 5, whose index scores quantised vectors, all but near ties)."""
    rng = random.Random(11)
    who = owner()
    rows = [msg(i, who, text=f"Note {i} on {TOPICS[i % len(TOPICS)]}.",
                metadata={"a": rng.choice(["x", "y", "z"]), "b": rng.randrange(5),
                          "c": rng.choice([True, False, None])}) for i in range(150)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])
    store = memory.store.tenant(tenant)
    domains: dict[str, list[Any]] = {"a": ["x", "y", "z"], "b": list(range(6)),
                                     "c": [True, False, None]}
    for n in range(25):
        keys = rng.sample(sorted(domains), rng.randint(1, 3))
        wanted = {k: rng.sample(domains[k], rng.randint(1, 2)) for k in keys}
        filters = Filters(metadata=condition(wanted))
        vector = memory.embedder.embed([TOPICS[n % len(TOPICS)]])[0]
        got = store.vector_search(who, vector, 10, 4, filters)
        exact = store._run_plain("queries/recall/vector_search_exact", k=10, owner=who,
                                 vector=vector,
                                 **filters.params())
        ids, exact_ids = [i for i, _ in got], [r["id"] for r in exact]
        if memory.store.vector_filters:  # SEARCH ranks by the full vectors: the exact order
            assert ids == exact_ids, wanted
        else:  # Neo4j 5 scores its int8-quantised vectors: near ties may swap
            assert len(set(ids) & set(exact_ids)) >= len(exact_ids) - 2, wanted
            assert [s for _, s in got] == pytest.approx([r["score"] for r in exact], abs=0.01)
        matching = {r["id"] for r in rows if all(r["metadata"][k] in vs
                                                 for k, vs in wanted.items())}
        assert {i for i, _ in got} <= matching
        assert len(got) == min(10, len(matching)), wanted


def _random_ops(rng: random.Random) -> dict[str, Any]:
    """A random operator object over the values of `test_operators_...`'s metadata."""
    shape = rng.randrange(5)
    if shape == 0:
        return {"gte": rng.choice([-1, 0, 1.5, 2]), "lt": rng.choice([2, 3.5, 5])}
    if shape == 1:
        return {rng.choice(["gt", "lte"]): rng.choice([0, 1, 2.5, 4])}
    if shape == 2:
        return {"nin": rng.sample(["x", "y", "z", 1, None], 2)}
    if shape == 3:
        return {"exists": rng.random() < 0.5}
    return {"ne": rng.choice(["x", 2, True, None])}


def test_operators_pass_in_cypher_what_they_pass_in_python(memory: Memory,
                                                           tenant: str) -> None:
    """Random metadata on 150 messages (numbers, strings, booleans, nulls, keys left out) and 30
    random filters of operators (ranges, ne, nin, exists, mixed with values): the store's check
    passes exactly the messages `metadata.matches` passes, and the vector and fulltext lists
    return only those (the vector list its k of them, whichever way it found them)."""
    rng = random.Random(5)
    who = owner()
    rows = []
    for i in range(150):
        meta: dict[str, Any] = {"n": rng.choice([0, 1, 1.5, 2, 3, 4.25, -1, "2", True, None]),
                                "s": rng.choice(["x", "y", "z", 1, None])}
        if rng.random() < 0.3:
            del meta[rng.choice(["n", "s"])]
        rows.append(msg(i, who, text=f"Note {i} on {TOPICS[i % len(TOPICS)]}.", metadata=meta))
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])
    store = memory.store.tenant(tenant)
    ids = [r["id"] for r in rows]
    stored = {r["id"]: pairs_of(r["metadata"]) for r in rows}
    for n in range(30):
        wanted: dict[str, Any] = {"n": _random_ops(rng)}
        if rng.random() < 0.5:
            wanted["s"] = _random_ops(rng) if rng.random() < 0.5 else rng.sample(["x", "y"], 1)
        SearchRequest(query="q", owner=who, metadata=wanted)  # the API accepts it
        cond = condition(wanted)
        filters = Filters(metadata=cond)
        expected = {i for i in ids if matches(stored[i], cond)}
        assert store.matching(ids, filters) == expected, wanted
        vector = memory.embedder.embed([TOPICS[n % len(TOPICS)]])[0]
        got = {i for i, _ in store.vector_search(who, vector, 10, 4, filters)}
        assert got <= expected and len(got) == min(10, len(expected)), wanted
        text = store.fulltext_search(who, "note", 10, 4, filters)
        assert {i for i, _ in text} <= expected, wanted
