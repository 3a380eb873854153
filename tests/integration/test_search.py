"""Hybrid recall on the real store: RRF of vector and fulltext, NEXT expansion, context, and
`as_of` held for every unit."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

from graphmem.models import MessageIn, SearchRequest
from graphmem.retrieval.search import returned_ids
from graphmem.service import Memory
from graphmem.store.tenant import NEAR_REACH, Filters, Windows
from tests.integration.conftest import auth
from tests.integration.helpers import T0, msg, owner

TALK = [
    "Hi! How was your weekend?",
    "Great, I went hiking in the Alps with my sister.",
    "Wow, which trail did you take?",
    "The one near Zermatt, with a view of the Matterhorn.",
    "I started learning the cello last month.",
    "That is lovely. Is it hard?",
    "The bowing is hard, but my teacher Ingrid is patient.",
    "Did you finish the tax forms?",
    "Yes, I filed them on Tuesday.",
    "Good, one thing less to worry about.",
]


@pytest.fixture
def talk(memory: Memory, tenant: str) -> str:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t)) for i, t in
                           enumerate(TALK)])
    return who


def _search(memory: Memory, tenant: str, **kw: Any) -> Any:
    return memory.ops(tenant).search_units(SearchRequest.model_validate(kw))


def test_each_method_finds_the_turn(memory: Memory, tenant: str, talk: str) -> None:
    for method in ("fulltext", "vector", "rrf", "rrf_expand"):
        res = _search(memory, tenant, query="Matterhorn trail", owner=talk, method=method, k=1)
        nuclei = [h for h in res.hits if h.nucleus]
        assert nuclei and nuclei[0].text.startswith("The one near Zermatt"), method


def test_rrf_marks_rules_and_fuses(memory: Memory, tenant: str, talk: str) -> None:
    res = _search(memory, tenant, query="cello teacher", owner=talk, method="rrf", k=3)
    assert all(h.nucleus for h in res.hits)
    top = max(res.hits, key=lambda h: h.score)
    assert set(top.rules) == {"vector", "fulltext"}
    assert top.score == pytest.approx(2 / 61, rel=0.05) or top.score <= 2 / 61


def test_k_hits_each_with_its_neighbours_as_its_window(memory: Memory, tenant: str,
                                                       talk: str) -> None:
    """k=1: one hit; the turns around it come as its window, not as hits; the context renders
    them all in time."""
    res = _search(memory, tenant, query="Matterhorn", owner=talk, k=1,
                  expand={"before": 1, "after": 2})
    assert [h.id for h in res.hits] == [f"{talk}-s1-3"]
    assert [t.id for t in res.hits[0].window] == [f"{talk}-s1-{i}" for i in (2, 4, 5)]
    assert returned_ids(res) == [f"{talk}-s1-{i}" for i in (3, 2, 4, 5)]
    assert res.context.count("## session") == 1
    lines = res.context.splitlines()[1:]  # in time (relative times get their date added)
    assert [ln.split("] ", 1)[1][:25] for ln in lines] == [
        f"{'alice' if i % 2 == 0 else 'bob'}: {TALK[i]}"[:25] for i in (2, 3, 4, 5)]
    five = _search(memory, tenant, query="weekend hiking cello tax", owner=talk, k=5)
    assert len(five.hits) == 5 and all(h.nucleus for h in five.hits)
    assert [h.score for h in five.hits] == sorted((h.score for h in five.hits), reverse=True)


def test_short_windows_read_as_the_general_query(memory: Memory, tenant: str,
                                                 talk: str) -> None:
    """`queries/recall/windows_near` (a short reach) returns the windows of
    `queries/recall/windows`, at the
    ends of the chain too, all in one row."""
    store = memory.store.tenant(tenant)
    ids = [f"{talk}-s1-{i}" for i in (0, 1, 4, 8, 9)]
    for before in range(NEAR_REACH + 1):
        for after in range(NEAR_REACH + 1):
            params: dict[str, Any] = {"ids": ids, "before": before, "after": after,
                                      "as_of": None}
            near = store._run("queries/recall/windows_near", **params)
            assert near == store._run("queries/recall/windows", **params), (before, after)
            assert len(near) == 1 and len(near[0]["windows"]) == len(ids)
            read = [m[0] for m in near[0]["messages"]]  # overlapping windows: each message once
            assert len(read) == len(set(read))
            assert set(read) == {i for w in near[0]["windows"]
                                 for i in (*w["earlier"], w["id"], *w["later"])}
    got = store.windows(ids[2:3], 1, 2)
    assert got.windows[ids[2]] == [f"{talk}-s1-{i}" for i in (3, 4, 5, 6)]
    assert set(got.records) == {f"{talk}-s1-{i}" for i in range(2, 8)}
    assert {i: {k: v for k, v in r.items() if k != "metadata_pairs"}
            for i, r in got.records.items()} == {  # a hit needs no recorded_by
        m["id"]: {k: v for k, v in m.items() if k != "recorded_by"}
        for m in store.get_messages(sorted(got.records))}
    assert (f"{talk}-s1-2", f"{talk}-s1-3") in got.links  # one step past the window's start
    assert store.windows([], 1, 2) == Windows()


def test_the_plain_reads_of_search_return_what_the_converted_reads_return(
        memory: Memory, tenant: str, talk: str) -> None:
    """The search path's reads taken as the driver gives them (``plain``) are the rows the
    date-time conversion gives: nothing they return is a date-time."""
    store = memory.store.tenant(tenant)
    ids = [f"{talk}-s1-{i}" for i in (0, 4, 9)]
    vector = memory.embedder.embed(["hiking in the Alps"])[0]
    filters = Filters().params()
    reads: list[tuple[str, dict[str, Any]]] = [
        ("queries/messages/get_messages", {"ids": ids}),
        ("queries/recall/windows_near", {"ids": ids, "before": 2, "after": 3, "as_of": None}),
        ("queries/recall/windows", {"ids": ids, "before": 5, "after": 5, "as_of": None}),
        ("queries/recall/vector_search", {"owner": talk, "vector": vector, "fetch": 20, "k": 5,
                                   **filters}),
        ("queries/recall/vector_search_exact",
         {"owner": talk, "vector": vector, "k": 5, **filters}),
        ("queries/recall/fulltext_search", {"owner": talk, "query": "hiking", "fetch": 20, "k": 5,
                                     **filters}),
    ]
    for name, params in reads:
        plain = store._run(name, plain=True, **params)
        assert plain == store._run(name, **params), name
        assert plain and plain[0], name
    assert store.get_messages(ids[:1])[0]["timestamp"].tzinfo is not None


def test_budget_limits_returned_messages(memory: Memory, tenant: str, talk: str) -> None:
    for budget in (1, 3, 7):
        res = _search(memory, tenant, query="weekend hiking cello", owner=talk,
                      max_messages=budget)
        assert len(res.hits) == budget
        assert len({h.id for h in res.hits}) == budget
        assert all(h.window == [] for h in res.hits)  # the budget counts every message
        scores = [h.score for h in res.hits]
        assert scores == sorted(scores, reverse=True)
        in_time = _search(memory, tenant, query="weekend hiking cello", owner=talk,
                          max_messages=budget, order="time")
        stamps = [h.timestamp for h in in_time.hits]
        assert stamps == sorted(stamps) and {h.id for h in in_time.hits} == {
            h.id for h in res.hits}


@pytest.mark.parametrize("query", [
    '"unbalanced quote', "field:value", "(open paren", "tax AND OR NOT", "wild*card?",
    "back\\slash", "a && b || !c", "~fuzzy^2", "[range TO x]", "{}/:", "???", "AND",
])
def test_lucene_syntax_is_not_interpreted(memory: Memory, tenant: str, talk: str,
                                          query: str) -> None:
    res = _search(memory, tenant, query=query, owner=talk, method="fulltext")
    assert isinstance(res.hits, list)


def test_filters_session_and_time(memory: Memory, tenant: str, talk: str) -> None:
    res = _search(memory, tenant, query="tax forms", owner=talk, session_id="other", k=3)
    assert res.hits == []
    res = _search(memory, tenant, query="tax forms", owner=talk, k=3, method="rrf",
                  time_to="2023-05-08T13:58:00Z")  # only the first four turns
    assert res.hits and all(int(h.id.rsplit("-", 1)[1]) < 4 for h in res.hits)


def _turn(id_: str) -> int:
    return int(id_.rsplit("-", 1)[1])


@pytest.mark.parametrize("method", ["fulltext", "vector", "rrf", "rrf_expand", "graph",
                                    "iterative"])
def test_as_of_leaves_out_every_turn_after_it(memory: Memory, tenant: str, talk: str,
                                              method: str) -> None:
    """A search "as of" turn 4's time sees nothing later: no hit, no turn of a window (the
    cello turn's neighbours after it are cut), with k and with a budget, in every method."""
    cut = (T0 + timedelta(seconds=30 * 4)).isoformat()
    query = "cello lessons, and did you file the tax forms?"
    for budget in (None, 5):
        res = _search(memory, tenant, query=query, owner=talk, method=method, as_of=cut,
                      max_messages=budget)
        seen = returned_ids(res)
        assert all(_turn(i) <= 4 for i in seen), (method, budget, seen)
        assert "filed" not in res.context and "Ingrid" not in res.context
        if method != "fulltext":
            assert f"{talk}-s1-4" in seen, (method, budget, seen)
    later = returned_ids(_search(memory, tenant, query=query, owner=talk, method=method))
    assert any(_turn(i) > 4 for i in later)  # without as_of the later turns are found


def test_owner_filter_and_exact_fallback(memory: Memory, tenant: str, talk: str) -> None:
    other = owner()
    memory.ops(tenant).ingest_messages([
        MessageIn.model_validate(msg(i, other, text=f"Matterhorn {i}")) for i in range(30)])
    res = _search(memory, tenant, query="Matterhorn", owner=talk, method="vector", k=5)
    assert res.hits and all(h.owner == talk for h in res.hits)


def test_search_over_http(api: TestClient) -> None:
    who = owner()
    api.post("/v1/messages", json={"messages": [msg(i, who, text=t) for i, t in enumerate(TALK)]},
             headers=auth())
    r = api.post("/v1/search", json={"query": "who teaches the cello?", "owner": who, "k": 2},
                 headers=auth())
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["hits"]) == 2
    assert any("Ingrid" in t["text"] for h in body["hits"] for t in [h, *h["window"]])
    assert {"id", "text", "speaker", "timestamp", "session_id", "score", "rules"} <= set(
        body["hits"][0])
    assert body["context_tokens"] > 0 and "Ingrid" in body["context"]


def test_a_search_request_hands_off_to_one_worker_thread(
    api: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key, the store and the tenant's memory are resolved on the event loop; only the
    search itself (blocking on Neo4j) runs in a worker thread: one hand-off per request."""
    who = owner()
    api.post("/v1/messages", json={"messages": [msg(i, who, text=t) for i, t in enumerate(TALK)]},
             headers=auth())
    api.post("/v1/search", json={"query": "cello", "owner": who}, headers=auth())  # schema ready
    handed: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(getattr(func, "__name__", repr(func)))
        return await run_sync(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    r = api.post("/v1/search", json={"query": "who teaches the cello?", "owner": who},
                 headers=auth())
    assert r.status_code == 200 and len(handed) == 1, handed


def test_one_round_trip_finds_what_two_find(memory: Memory, tenant: str, talk: str) -> None:
    """The message lists in one query or in two: the same search result."""
    base = memory.recipe()
    for query in ("Matterhorn trail", "who teaches the cello?", "tax forms on Tuesday"):
        req = SearchRequest(query=query, owner=talk, k=3)
        one = memory.ops(tenant).search_units(req, base.with_(one_round_trip=True))
        two = memory.ops(tenant).search_units(req, base.with_(one_round_trip=False))
        assert one.hits and one == two, query
