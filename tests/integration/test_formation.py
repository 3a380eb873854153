"""Episode formation on the real store: every message in exactly one episode, NEXT chains,
idempotent and incremental forming, late messages, and the LLM path against
`ScriptedOpenAIServer` (tests/support: an OpenAI-compatible TEST DOUBLE, no model)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem.formation.llm_episodes import LLMFinder, LLMNarrator
from graphmem.formation.run import Former
from graphmem.llm.client import LLMClient, LLMFailure, LLMSettings
from graphmem.models import MessageIn
from graphmem.service import Memory
from graphmem.store.episodes import EpisodeStore
from tests.integration.helpers import T0, msg, owner
from tests.support.scripted_openai import ScriptedOpenAIServer

PAUSE = timedelta(hours=2)

HIKING = [
    "I'm planning a hiking trip to the Dolomites next month with my brother.",
    "Nice! Which trails are you thinking of hiking in the Dolomites?",
    "We want to do the Alta Via 1, a hut-to-hut route over six days.",
    "Have you booked the mountain huts along the route yet?",
    "Not yet, the huts fill up fast so I should book them this week.",
    "Bring good hiking boots and rain gear, the weather in the mountains changes quickly.",
    "I bought new boots yesterday and I'm breaking them in on short hikes.",
    "Smart. Blisters can ruin a multi-day trek in the mountains.",
    "My brother is also bringing trekking poles and a first aid kit for the hike.",
    "Sounds like a great trip, send me photos from the summit.",
]
BAKING = [
    "I finally baked my first loaf of sourdough bread this morning.",
    "How long did you let the sourdough dough ferment in the fridge?",
    "About fourteen hours in the fridge, then I baked it in a Dutch oven.",
    "Did the sourdough starter rise well before you mixed the dough?",
    "Yes, the starter doubled in size after I fed it with rye flour.",
    "What hydration did you use for the bread dough?",
    "Seventy-five percent hydration with bread flour and a little whole wheat flour.",
    "The crumb must have been open and airy with that much water in the dough.",
    "It was, and the crust was crunchy. I'll bake two loaves of bread again soon.",
    "Save me a slice of that sourdough bread next time!",
]


def at(i: int, base: datetime = T0, pause: bool = True) -> datetime:
    """Turn i of a session: 30 s apart, with a two-hour pause before turn 10."""
    return base + timedelta(seconds=30 * i) + (PAUSE if pause and i >= 10 else timedelta())


def ingest(memory: Memory, tenant: str, who: str, turns: dict[int, str], session: str = "s1",
           base: datetime = T0, pause: bool = True) -> None:
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(
        msg(i, who, session, text=text, timestamp=at(i, base, pause).isoformat()))
        for i, text in turns.items()])


def two_topics(n: int = 10) -> dict[int, str]:
    """Hiking in turns 0..n-1, then (after the pause) baking in turns 10..10+n-1."""
    return {i: HIKING[i] for i in range(n)} | {10 + i: BAKING[i] for i in range(n)}


def mid(who: str, i: int, session: str = "s1") -> str:
    return f"{who}-{session}-{i}"


def membership(cypher: Any, tenant: str, who: str) -> dict[str, list[str]]:
    """Every message of the owner -> the ids of the episodes derived from it."""
    rows = cypher(
        "MATCH (m:Message {tenant: $t, owner: $o}) "
        "OPTIONAL MATCH (e:Episode)-[:DERIVED_FROM]->(m) "
        "RETURN m.id AS id, collect(e.id) AS episodes", t=tenant, o=who)
    return {r["id"]: sorted(r["episodes"]) for r in rows}


def assert_each_message_in_one_episode(cypher: Any, tenant: str, who: str) -> dict[str, str]:
    rows = cypher(
        "MATCH (m:Message {tenant: $t, owner: $o}) "
        "RETURN m.id AS id, COUNT { (:Episode)-[:DERIVED_FROM]->(m) } AS n", t=tenant, o=who)
    assert rows and all(r["n"] == 1 for r in rows), [r for r in rows if r["n"] != 1]
    return {m: es[0] for m, es in membership(cypher, tenant, who).items()}


def episodes(cypher: Any, tenant: str, who: str) -> list[dict[str, Any]]:
    """The owner's episodes in reported_at order, with their messages in DERIVED_FROM order."""
    rows: list[dict[str, Any]] = cypher(
        "MATCH (e:Episode {tenant: $t, owner: $o}) "
        "CALL (e) { MATCH (e)-[r:DERIVED_FROM]->(m) WITH m ORDER BY r.idx "
        "RETURN collect(m.id) AS messages, collect(m.timestamp) AS times } "
        "RETURN e.id AS id, e.session_id AS session, e.title AS title, "
        "e.narrative AS narrative, e.participants AS participants, "
        "e.reported_at AS reported_at, e.reported_until AS reported_until, "
        "e.occurred_at AS occurred_at, e.occurred_until AS occurred_until, "
        "e.formed_by AS formed_by, e.caption AS caption, e.message_count AS message_count, "
        "size(e.embedding) AS dims, e.updated_at AS updated_at, messages, times "
        "ORDER BY e.reported_at, e.id", t=tenant, o=who)
    return rows


def chain(cypher: Any, tenant: str, who: str) -> list[str]:
    """The owner's episodes following NEXT from the one without a predecessor; one chain."""
    rows = cypher(
        "MATCH (e:Episode {tenant: $t, owner: $o}) "
        "RETURN e.id AS id, COUNT { (e)-[:NEXT]->(:Episode) } AS out, "
        "COUNT { (:Episode)-[:NEXT]->(e) } AS inc", t=tenant, o=who)
    assert all(r["out"] <= 1 and r["inc"] <= 1 for r in rows), rows
    heads = cypher(
        "MATCH (first:Episode {tenant: $t, owner: $o}) WHERE NOT (:Episode)-[:NEXT]->(first) "
        "MATCH p = (first)-[:NEXT*0..]->(last) WHERE NOT (last)-[:NEXT]->(:Episode) "
        "RETURN [n IN nodes(p) | n.id] AS ids", t=tenant, o=who)
    assert len(heads) == 1, heads
    ids: list[str] = heads[0]["ids"]
    assert len(ids) == len(rows)
    return ids


def count(cypher: Any, query: str, **params: Any) -> int:
    return int(cypher(query, **params)[0]["n"])


# --- the no-LLM path ----------------------------------------------------------------------------

def test_form_a_session(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    ingest(memory, tenant, who, two_topics())
    report = memory.former.form(memory.stores(tenant), who, "s1")
    assert (report.owner, report.session_id, report.messages) == (who, "s1", 20)
    assert report.extended == 0

    of = assert_each_message_in_one_episode(cypher, tenant, who)
    eps = episodes(cypher, tenant, who)
    assert report.created == len(eps) >= 2
    # the two-hour pause starts an episode; no episode mixes the two topics
    assert of[mid(who, 10)] != of[mid(who, 9)]
    assert {of[mid(who, i)] for i in range(10)}.isdisjoint({of[mid(who, i)] for i in range(10, 20)})
    assert [m for e in eps for m in e["messages"]] == [mid(who, i) for i in range(20)]
    for e in eps:
        assert e["session"] == "s1"
        assert e["title"] and e["caption"] == e["title"]
        assert e["narrative"].count("\n") == len(e["messages"]) - 1
        assert set(e["participants"]) <= {"alice", "bob"} and e["participants"]
        assert e["reported_at"].to_native() == e["times"][0].to_native()
        assert e["reported_until"].to_native() == e["times"][-1].to_native()
        assert e["occurred_at"] is not None and e["occurred_until"] is not None
        assert e["dims"] == memory.embedder.dimensions
        assert e["formed_by"] == "extractive"
        assert e["message_count"] == len(e["messages"])
    # "I bought new boots yesterday" (2023-05-08): its episode happened from 2023-05-07
    [boots] = [e for e in eps if mid(who, 6) in e["messages"]]
    assert boots["occurred_at"].to_native() == datetime(2023, 5, 7, tzinfo=UTC)
    assert "yesterday [2023-05-07]" in boots["narrative"]
    assert chain(cypher, tenant, who) == [e["id"] for e in eps]
    got = EpisodeStore(memory.store, tenant).get([e["id"] for e in eps])  # its own read path
    assert [g["messages"] for g in got] == [e["messages"] for e in eps]

    # forming again changes nothing
    again = memory.former.form(memory.stores(tenant), who, "s1")
    assert (again.created, again.extended, again.messages) == (0, 0, 0)
    assert episodes(cypher, tenant, who) == eps
    assert count(cypher, "MATCH (:Episode {tenant: $t})-[r:DERIVED_FROM]->() RETURN count(r) AS n",
                 t=tenant) == 20


def test_later_messages_are_formed_incrementally(memory: Memory, tenant: str,
                                                 cypher: Any) -> None:
    who = owner()
    ingest(memory, tenant, who, two_topics(3))  # hiking 0..2, pause, baking 10..12
    memory.former.form(memory.stores(tenant), who, "s1")
    before = assert_each_message_in_one_episode(cypher, tenant, who)
    last = before[mid(who, 12)]

    # more baking, right after: continues the last episode or starts new ones
    ingest(memory, tenant, who, {10 + i: BAKING[i] for i in range(3, 6)})
    report = memory.former.form(memory.stores(tenant), who, "s1")
    assert report.messages == 3
    after = assert_each_message_in_one_episode(cypher, tenant, who)
    assert {m: after[m] for m in before} == before  # old messages keep their episodes
    new = {after[mid(who, i)] for i in range(13, 16)}
    assert new.isdisjoint(set(before.values()) - {last})
    assert report.extended == (1 if last in new else 0)
    assert report.created == len(new - {last})

    # after another pause: a new episode
    ingest(memory, tenant, who, {30: "Back again. Did you see the match last night?",
                                 31: "Yes, what a final! The penalty shootout was unbelievable."},
           base=T0 + PAUSE)
    report = memory.former.form(memory.stores(tenant), who, "s1")
    assert (report.created, report.extended, report.messages) == (1, 0, 2)
    final = assert_each_message_in_one_episode(cypher, tenant, who)
    assert {m: final[m] for m in after} == after
    assert final[mid(who, 30)] == final[mid(who, 31)] not in set(after.values())
    eps = episodes(cypher, tenant, who)
    assert eps[-1]["messages"] == [mid(who, 30), mid(who, 31)]
    assert chain(cypher, tenant, who) == [e["id"] for e in eps]


def test_late_messages_go_into_exactly_one_episode(memory: Memory, tenant: str,
                                                   cypher: Any) -> None:
    who = owner()
    ingest(memory, tenant, who, two_topics(3))
    memory.former.form(memory.stores(tenant), who, "s1")
    before = assert_each_message_in_one_episode(cypher, tenant, who)
    late = [  # between two hiking turns, and in the middle of the pause
        msg(0, who, id="late-1", text="Also, the Alta Via 1 starts at Lago di Braies.",
            timestamp=(at(1) + timedelta(seconds=10)).isoformat()),
        msg(1, who, id="late-2", text="Sorry, I was away for a while.",
            timestamp=(at(2) + PAUSE / 2).isoformat()),
    ]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in late])
    report = memory.former.form(memory.stores(tenant), who, "s1")
    assert report.messages == 2
    after = assert_each_message_in_one_episode(cypher, tenant, who)
    assert {m: after[m] for m in before} == before
    eps = episodes(cypher, tenant, who)
    [home] = [e for e in eps if "late-1" in e["messages"]]
    if after["late-1"] == before[mid(who, 1)]:  # joined its neighbours: in time order
        assert home["messages"] == [mid(who, 0), mid(who, 1), "late-1", mid(who, 2)]
    # an hour after the last turn: not the hiking episode
    assert after["late-2"] != before[mid(who, 2)]
    assert chain(cypher, tenant, who) == [e["id"] for e in eps]
    assert memory.former.form(memory.stores(tenant), who, "s1").messages == 0


def test_episodes_are_chained_across_sessions(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    ingest(memory, tenant, who, two_topics(2), session="later", base=T0 + timedelta(days=1))
    ingest(memory, tenant, who, two_topics(2), session="earlier")
    memory.former.form(memory.stores(tenant), who, "later")
    memory.former.form(memory.stores(tenant), who, "earlier")  # formed second, reported first
    assert_each_message_in_one_episode(cypher, tenant, who)
    eps = episodes(cypher, tenant, who)
    assert len(eps) >= 4  # each session has a pause
    order = chain(cypher, tenant, who)
    assert order == [e["id"] for e in eps]
    sessions = [e["session"] for e in eps]
    assert sessions == sorted(sessions, key=["earlier", "later"].index)
    assert set(sessions) == {"earlier", "later"}
    times = [e["reported_at"].to_native() for e in eps]
    assert times == sorted(times)
    # another owner's episodes are not linked in
    other = owner()
    ingest(memory, tenant, other, {0: HIKING[0], 1: HIKING[1]}, base=T0 + timedelta(hours=12))
    memory.former.form(memory.stores(tenant), other, "s1")
    assert chain(cypher, tenant, who) == order
    assert count(cypher, "MATCH (a:Episode {tenant: $t})-[:NEXT]->(b:Episode) "
                 "WHERE a.owner <> b.owner RETURN count(*) AS n", t=tenant) == 0


def test_a_topic_change_without_pause_starts_an_episode(memory: Memory, tenant: str,
                                                       cypher: Any) -> None:
    """Formed at once: hiking 0..5, then baking 6..11 right after (no pause)."""
    who = owner()
    ingest(memory, tenant, who, {i: HIKING[i] for i in range(6)}
           | {6 + i: BAKING[i] for i in range(6)}, pause=False)
    memory.former.form(memory.stores(tenant), who, "s1")
    of = assert_each_message_in_one_episode(cypher, tenant, who)
    assert of[mid(who, 6)] != of[mid(who, 5)]
    assert {of[mid(who, i)] for i in range(6)}.isdisjoint({of[mid(who, i)] for i in range(6, 12)})


def test_a_topic_change_at_an_increment_starts_an_episode(memory: Memory, tenant: str,
                                                          cypher: Any) -> None:
    """The same session formed in two runs, split where the topic changes."""
    who = owner()
    ingest(memory, tenant, who, {i: HIKING[i] for i in range(6)}, pause=False)
    memory.former.form(memory.stores(tenant), who, "s1")
    ingest(memory, tenant, who, {6 + i: BAKING[i] for i in range(6)}, pause=False)
    memory.former.form(memory.stores(tenant), who, "s1")
    of = assert_each_message_in_one_episode(cypher, tenant, who)
    assert of[mid(who, 6)] != of[mid(who, 5)]


# --- the LLM path, against the scripted server --------------------------------------------------


@pytest.fixture
def llm_former(memory: Memory, srv: ScriptedOpenAIServer) -> Iterator[Former]:
    settings = LLMSettings(base_url=srv.base_url, model="test-model", max_retries=1,
                           backoff_base_s=0.01, timeout_s=10.0)
    with LLMClient(settings) as client:
        yield Former(memory.store, memory.embedder, LLMFinder(client), LLMNarrator(client),
                     client, memory.facts)


def script_llm_session(srv: ScriptedOpenAIServer) -> None:
    """Ten turns (hiking 0..4, baking 10..14): windows 0..7 and 6..9 (context 6, 7)."""
    srv.reply_json({"boundaries": [5]})
    srv.reply_json({"boundaries": [0, 1, 9]})  # context and out of range: ignored
    srv.reply_json({"title": "Planning a Dolomites hike",
                    "narrative": "Alice plans to hike the Alta Via 1 with her brother."})
    srv.reply_json({"title": "A first sourdough loaf",
                    "narrative": "Alice baked her first sourdough loaf on 2023-05-08."})


HIKE_FACT = {"subject": "alice", "type": "Planned Trip", "content": "hiking the Alta Via 1",
             "valid_from": None, "explicit": True, "confidence": 0.9}
NOTHING: dict[str, list[Any]] = {"facts": [], "profile": []}


def test_llm_path(memory: Memory, tenant: str, cypher: Any, srv: ScriptedOpenAIServer,
                  llm_former: Former) -> None:
    who = owner()
    ingest(memory, tenant, who, two_topics(5))
    script_llm_session(srv)
    srv.reply_json({"facts": [HIKE_FACT | {"sources": [f"[{mid(who, 2)}]", "m-unknown"]}],
                    "profile": []})
    srv.reply_json(NOTHING)

    report = llm_former.form(memory.stores(tenant), who, "s1")
    assert (report.created, report.extended, report.messages) == (2, 0, 10)
    assert (srv.pending, srv.unscripted) == (0, 0)
    assert "--- new ---" in srv.requests[1]["messages"][1]["content"]
    of = assert_each_message_in_one_episode(cypher, tenant, who)
    eps = episodes(cypher, tenant, who)
    assert [e["title"] for e in eps] == ["Planning a Dolomites hike", "A first sourdough loaf"]
    assert [e["caption"] for e in eps] == [e["title"] for e in eps]
    assert eps[1]["narrative"] == "Alice baked her first sourdough loaf on 2023-05-08."
    assert {e["formed_by"] for e in eps} == {"llm:test-model"}
    assert eps[0]["messages"] == [mid(who, i) for i in range(5)]
    assert of[mid(who, 10)] == eps[1]["id"]
    assert all(e["dims"] == memory.embedder.dimensions for e in eps)
    rows = cypher("MATCH (f:Observation {tenant: $t, owner: $o})-[:SUPPORTED_BY]->(m:Message) "
                  "RETURN f.content AS content, f.type AS type, collect(m.id) AS sources, "
                  "f.recorded_by AS recorded_by", t=tenant, o=who)
    assert rows == [{"content": "hiking the Alta Via 1", "type": "planned_trip",
                     "sources": [mid(who, 2)], "recorded_by": "extraction"}]
    ops = [u.operation for u in llm_former._llm.ledger.records()]  # type: ignore[union-attr]
    assert ops == ["episode_boundaries"] * 2 + ["episode_narrative"] * 2 + ["extract_facts"] * 2

    # idempotent: no call, no change
    asked = len(srv.requests)
    assert llm_former.form(memory.stores(tenant), who, "s1").messages == 0
    assert len(srv.requests) == asked
    assert episodes(cypher, tenant, who) == eps

    # two more baking turns continue the last episode, which is narrated again
    ingest(memory, tenant, who, {15: BAKING[5], 16: BAKING[6]})
    srv.reply_json({"boundaries": []})  # the new stretch 15..16 on its own: no boundary
    srv.reply_json({"boundaries": []})  # 15 after the context 13, 14: no new episode
    srv.reply_json({"title": "Sourdough, hydration and all",
                    "narrative": "Alice baked sourdough at 75% hydration."})
    srv.reply_json(NOTHING)
    report = llm_former.form(memory.stores(tenant), who, "s1")
    assert (report.created, report.extended, report.messages) == (0, 1, 2)
    assert (srv.pending, srv.unscripted) == (0, 0)
    assert "--- new ---" in srv.requests[asked + 1]["messages"][1]["content"]
    after = assert_each_message_in_one_episode(cypher, tenant, who)
    assert after[mid(who, 15)] == after[mid(who, 16)] == of[mid(who, 14)]
    assert {m: after[m] for m in of} == of
    eps = episodes(cypher, tenant, who)
    assert [e["title"] for e in eps] == ["Planning a Dolomites hike",
                                         "Sourdough, hydration and all"]
    assert eps[1]["messages"] == [mid(who, i) for i in range(10, 17)]


def short_session(memory: Memory, tenant: str) -> str:
    """Hiking 0, 1, then baking 10, 11: one window."""
    who = owner()
    ingest(memory, tenant, who, {0: HIKING[0], 1: HIKING[1], 10: BAKING[0], 11: BAKING[1]})
    return who


def assert_nothing_formed(cypher: Any, tenant: str, who: str) -> None:
    assert count(cypher, "MATCH (e:Episode {tenant: $t}) RETURN count(e) AS n", t=tenant) == 0
    assert count(cypher, "MATCH (f:Fact {tenant: $t}) RETURN count(f) AS n", t=tenant) == 0
    assert all(es == [] for es in membership(cypher, tenant, who).values())


def test_llm_failure_writes_nothing(memory: Memory, tenant: str, cypher: Any,
                                    srv: ScriptedOpenAIServer, llm_former: Former) -> None:
    who = short_session(memory, tenant)
    srv.default(status=500, text="the model is down")
    with pytest.raises(LLMFailure) as err:
        llm_former.form(memory.stores(tenant), who, "s1")
    assert err.value.operation == "episode_boundaries" and err.value.attempts == 2
    assert len(srv.requests) == 2
    assert_nothing_formed(cypher, tenant, who)


def test_llm_narrative_failure_writes_nothing(memory: Memory, tenant: str, cypher: Any,
                                              srv: ScriptedOpenAIServer,
                                              llm_former: Former) -> None:
    who = short_session(memory, tenant)
    srv.reply_json({"boundaries": [2]})
    srv.reply_json({"title": "Planning a Dolomites hike", "narrative": "Alice plans a hike."})
    srv.default(status=500)
    with pytest.raises(LLMFailure) as err:
        llm_former.form(memory.stores(tenant), who, "s1")
    assert err.value.operation == "episode_narrative"
    assert_nothing_formed(cypher, tenant, who)


def test_llm_extraction_failure_is_retried_by_the_next_run(
        memory: Memory, tenant: str, cypher: Any, srv: ScriptedOpenAIServer,
        llm_former: Former) -> None:
    """Episodes are written before their facts are extracted; an episode whose extraction failed
    keeps no extracted_at, and the next run extracts it (and only it) without forming again."""
    who = short_session(memory, tenant)
    srv.reply_json({"boundaries": [2]})
    srv.reply_json({"title": "Planning a Dolomites hike", "narrative": "Alice plans a hike."})
    srv.reply_json({"title": "A first sourdough loaf", "narrative": "Alice baked a loaf."})
    srv.reply_json(NOTHING)  # the hiking episode: extracted
    srv.reply_status(500)  # the baking episode: fails twice
    srv.reply_status(500)
    with pytest.raises(LLMFailure) as err:
        llm_former.form(memory.stores(tenant), who, "s1")
    assert err.value.operation == "extract_facts"
    assert_each_message_in_one_episode(cypher, tenant, who)
    rows = cypher("MATCH (e:Episode {tenant: $t}) RETURN e.title AS title, "
                  "e.extracted_at IS NOT NULL AS done, e.extracted_by AS by "
                  "ORDER BY e.reported_at", t=tenant)
    assert rows == [{"title": "Planning a Dolomites hike", "done": True, "by": "test-model"},
                    {"title": "A first sourdough loaf", "done": False, "by": None}]
    assert count(cypher, "MATCH (f:Fact {tenant: $t}) RETURN count(f) AS n", t=tenant) == 0

    asked = len(srv.requests)
    srv.reply_json({"facts": [HIKE_FACT | {"content": "baked a first sourdough loaf",
                                           "type": "baking", "sources": [mid(who, 10)]}],
                    "profile": []})
    report = llm_former.form(memory.stores(tenant), who, "s1")
    assert (report.created, report.extended, report.messages) == (0, 0, 0)
    assert len(srv.requests) == asked + 1  # one extraction, no boundaries, no narrative
    prompt = str(srv.requests[-1]["messages"][-1]["content"])
    assert "[m1]" in prompt and "cite only m1 .. m2" in prompt  # the baking turns 10, 11
    assert "sourdough" in prompt and "Dolomites" not in prompt
    assert cypher("MATCH (f:Observation {tenant: $t})-[:SUPPORTED_BY]->(m:Message) "
                  "RETURN f.content AS c, m.id AS m", t=tenant) == [
        {"c": "baked a first sourdough loaf", "m": mid(who, 10)}]
    assert count(cypher, "MATCH (e:Episode {tenant: $t}) WHERE e.extracted_at IS NULL "
                 "RETURN count(e) AS n", t=tenant) == 0
    assert llm_former.form(memory.stores(tenant), who, "s1").messages == 0
    assert len(srv.requests) == asked + 1
