"""Method ``iterative`` on the real store, over HTTP: rounds of the base method, follow-up queries
of the offline decider, the assembled hits within the budget, and the trace on request."""

from __future__ import annotations

from fastapi.testclient import TestClient

from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from tests.integration.conftest import KEYS, auth
from tests.integration.helpers import msg, owner

TALK = [
    ("alice", "Hi Bob! How was your weekend?"),
    ("bob", "Great, I played Valorant all Saturday with my cousin Ingrid."),
    ("alice", "Nice, which other games do you like?"),
    ("bob", "Counter-Strike, and lately Xenoblade Chronicles on the Switch."),
    ("alice", "I started learning the cello last month."),
    ("bob", "That is lovely. Is it hard?"),
    ("alice", "The bowing is hard, but my teacher is patient."),
    ("bob", "Ingrid beat me at Xenoblade Chronicles again yesterday, by the way."),
    ("alice", "Did you finish the tax forms?"),
    ("bob", "Yes, I filed them on Tuesday."),
]


def _ingest(memory: Memory, tenant: str) -> str:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t, speaker=s))
                           for i, (s, t) in enumerate(TALK)])
    return who


def test_iterative_over_http_with_trace(api: TestClient, memory: Memory) -> None:
    who = _ingest(memory, KEYS["key-a"])
    try:
        body = {"query": "What video games does Bob play?", "owner": who, "method": "iterative",
                "max_messages": 4, "trace": True}
        res = api.post("/v1/search", json=body, headers=auth())
        assert res.status_code == 200, res.text
        out = res.json()
        assert out["method"] == "iterative"
        ids = [h["id"] for h in out["hits"]]
        assert len(ids) == len(set(ids)) <= 4
        assert f"{who}-s1-3" in ids or f"{who}-s1-1" in ids  # a games turn
        trace = out["trace"]
        assert trace["decider"] == "offline" and trace["base"] == "rrf_windows"
        first = trace["rounds"][0]
        assert first["queries"][0]["query"] == body["query"]
        assert first["queries"][0]["candidates"][0]["rank"] == 1
        assert trace["recalls"] <= 1 + (3 - 1) * 3 and trace["decider_calls"] <= 3
        assert trace["stop"] in ("sufficient", "no_queries", "rounds", "no_progress")
        for r in trace["rounds"][1:]:  # every follow-up reserved its first new hit, if any
            for q in r["queries"]:
                assert q["reserved"] is None or q["reserved"] in trace["reserved"]
        assert out["context_tokens"] > 0 and "bob: " in out["context"]
        # without trace: none; other methods never carry one
        plain = api.post("/v1/search", json={**body, "trace": False}, headers=auth()).json()
        assert plain["trace"] is None
        assert [h["id"] for h in plain["hits"]] == ids
        one_shot = api.post("/v1/search", json={**body, "method": "rrf_expand"},
                            headers=auth()).json()
        assert one_shot["trace"] is None
    finally:
        memory.ops(KEYS["key-a"]).delete_owner(who)


def test_iterative_without_budget_returns_as_many_as_the_base(memory: Memory,
                                                               tenant: str) -> None:
    who = _ingest(memory, tenant)
    req = SearchRequest(query="Who is Ingrid?", owner=who, k=2, method="rrf_windows")
    base = memory.ops(tenant).search_units(req)
    it = memory.ops(tenant).search_units(req.model_copy(update={"method": "iterative"}))
    assert 0 < len(it.hits) <= len(base.hits)
    assert it.trace is None
