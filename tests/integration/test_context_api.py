"""`POST /v1/context` over HTTP on the real Neo4j: messages, episodes and the facts valid at the
question's time, each with its sources; the token budget; the trace; bad input; tenants."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.retrieval.context import estimate_tokens
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner

TURNS = [
    "I moved to Lisbon in January, the light there is wonderful.",
    "Lisbon! Do you like your new flat?",
    "Yes, it has a balcony with a view of the river.",
    "Are you still working at the bakery?",
    "No, I started at a bookshop in Alfama last week.",
    "Which bookshop? I love old bookshops.",
]


def city(who: str, content: str, valid_from: str, sources: list[str]) -> dict[str, Any]:
    return {"owner": who, "subject": who, "type": "city", "content": content,
            "valid_from": valid_from, "explicit": True, "sources": sources}


@pytest.fixture
def alice(api: TestClient, memory: Memory) -> Iterator[str]:
    """An owner of tenant-a with a session, its episodes and two facts about her city: Lisbon
    from January 2023, Porto from June 2023 (it supersedes Lisbon)."""
    who = owner()
    body = {"messages": [msg(i, who, text=t) for i, t in enumerate(TURNS)]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    memory.former.form(memory.stores("tenant-a"), who, "s1")
    first = f"{who}-s1-0"
    for fact in (city(who, "lives in Lisbon", "2023-01-15T00:00:00Z", [first]),
                 city(who, "lives in Porto", "2023-06-01T00:00:00Z", [first])):
        r = api.post("/v1/observations", json={"observations": [fact]}, headers=auth())
        assert r.status_code == 201, r.text
    yield who
    api.delete(f"/v1/owners/{who}", headers=auth())


def context(api: TestClient, key: str = "key-a", **body: Any) -> dict[str, Any]:
    r = api.post("/v1/context", json=body, headers=auth(key))
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_mixed_units_with_sources(api: TestClient, alice: str) -> None:
    got = context(api, query="where does she live and work?", owner=alice,
                  as_of="2023-05-09T00:00:00Z")  # the day after the talk: Lisbon still
    units = {i["unit"] for i in got["items"]}
    assert units == {"message", "episode", "fact"}, got["items"]
    ids = {f"{alice}-s1-{i}" for i in range(len(TURNS))}
    for n, item in enumerate(got["items"], 1):
        assert item["evidence"] == f"e{n}"
        assert f"[e{n}] " in got["context"]
        assert item["sources"]
        if item["unit"] == "message":
            assert item["sources"] == [item["id"]] and item["id"] in ids
        if item["unit"] == "episode":
            assert set(item["sources"]) <= ids
    assert any(i["core"] for i in got["items"] if i["unit"] == "message")
    assert got["context_tokens"] == estimate_tokens(got["context"]) <= got["max_tokens"]


def test_facts_valid_at_the_questions_time(api: TestClient, alice: str) -> None:
    def facts(as_of: str) -> list[str]:
        got = context(api, query="which city does she live in?", owner=alice, as_of=as_of,
                      units=["fact"])
        return [i["text"] for i in got["items"]]

    assert facts("2023-03-01T00:00:00Z") == ["lives in Lisbon"]
    assert facts("2023-06-01T01:00:00+02:00") == ["lives in Lisbon"]  # 2023-05-31 23:00 UTC
    assert facts("2023-07-01T00:00:00+02:00") == ["lives in Porto"]
    assert facts("2022-12-01T00:00:00Z") == []
    got = context(api, query="which city?", owner=alice, units=["fact"],
                  as_of="2023-03-01T00:00:00Z")
    assert "## facts valid at 2023-03-01" in got["context"]
    assert got["as_of"] == "2023-03-01T00:00:00Z"


def test_nothing_after_as_of_enters(api: TestClient, alice: str) -> None:
    """As of March 2023, the talk of 8 May has not happened: no message of it, no episode
    formed from it; the fact valid then (from January) is all there is. As of 8 May 13:57, the
    turns sent by then only."""
    march = context(api, query="where does she live and work?", owner=alice,
                    as_of="2023-03-01T00:00:00Z", trace=True)
    assert [(i["unit"], i["text"]) for i in march["items"]] == [("fact", "lives in Lisbon")]
    assert "Alfama" not in march["context"] and "balcony" not in march["context"]
    mid = context(api, query="where does she live and work? bookshop balcony", owner=alice,
                  as_of="2023-05-08T13:57:00Z", units=["message", "episode"])
    sent = {f"{alice}-s1-{i}" for i in range(3)}  # turns 0-2: 13:56:00 to 13:57:00
    assert mid["items"] and {i["id"] for i in mid["items"]} <= sent
    assert "Alfama" not in mid["context"]


def test_budget_keeps_hits_first(api: TestClient, alice: str) -> None:
    full = context(api, query="bookshop in Alfama", owner=alice, trace=True,
                   units=["message"])
    small = context(api, query="bookshop in Alfama", owner=alice, trace=True,
                    units=["message"], max_tokens=40)
    assert small["context_tokens"] <= 40 < full["context_tokens"]
    assert 0 < len(small["items"]) < len(full["items"])
    assert all(i["core"] for i in small["items"])  # hits before the turns around them
    left = {(r["unit"], r["id"]) for r in small["trace"]["over_budget"]}
    kept = {(i["unit"], i["id"]) for i in small["items"]}
    assert left | kept == {(i["unit"], i["id"]) for i in full["items"]}
    assert context(api, query="bookshop", owner=alice, max_tokens=1)["items"] == []


def test_trace_on_request(api: TestClient, alice: str) -> None:
    got = context(api, query="bookshop", owner=alice, trace=True, method="rrf")
    trace = got["trace"]
    assert got["method"] == "rrf"
    assert [(s["unit"], s["method"]) for s in trace["searches"]] == [
        ("message", "rrf"), ("fact", "rrf"), ("episode", "rrf")]
    assert trace["kept"] == len(got["items"]) and trace["candidates"] >= trace["kept"]
    assert context(api, query="bookshop", owner=alice)["trace"] is None


def test_iterative_rounds_in_the_trace(api: TestClient, alice: str) -> None:
    got = context(api, query="which bookshop in Alfama?", owner=alice, method="iterative",
                  trace=True)
    assert got["method"] == "iterative" and got["items"]
    trace = got["trace"]
    assert trace["rounds"] and all("queries" in r for r in trace["rounds"])
    assert trace["searches"][0]["trace"]["decider"]  # the offline decider: no LLM here


@pytest.mark.parametrize(("body", "field"), [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"max_tokens": 10**9}, "max_tokens"),
    ({"units": ["message", "thought"]}, "units[1]"),
    ({"units": []}, "units"),
    ({"as_of": "2023-03-01T00:00:00"}, "as_of"),
    ({"as_of": "2023-03-01"}, "as_of"),
    ({"method": "telepathy"}, "method"),
    ({"k": 0}, "k"),
    ({"owner": "a\u0000b"}, "owner"),
    ({"surprise": 1}, "surprise"),
])
def test_bad_input_names_the_field(api: TestClient, body: dict[str, Any], field: str) -> None:
    r = api.post("/v1/context", json={"query": "q", "owner": "o", **body}, headers=auth())
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["field"] == field


def test_unknown_preset_is_a_422(api: TestClient) -> None:
    r = api.post("/v1/context", json={"query": "q", "owner": "o", "preset": "nope"},
                 headers=auth())
    assert r.status_code == 422 and r.json()["field"] == "preset"


def test_tenants_are_isolated(api: TestClient, alice: str) -> None:
    mine = context(api, query="where does she live?", owner=alice)
    theirs = context(api, "key-b", query="where does she live?", owner=alice)
    assert mine["items"] and theirs["items"] == [] and theirs["context"] == ""
