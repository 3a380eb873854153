"""Unit tests of graphmem.retrieval.deciders: the LLM decider against the scripted
OpenAI-compatible test server (short ids mapped back, malformed replies corrected, failure ->
fallback, usage under "decide"), its prompt, and the offline decider's heuristics."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from graphmem.llm import LLMClient, LLMSettings
from graphmem.retrieval import prompts_decide
from graphmem.retrieval.deciders import LLMDecider, OfflineDecider, names, split_people, statement
from graphmem.retrieval.iterative import (
    Bounds,
    Budget,
    Candidate,
    DeciderFailed,
    Pool,
    View,
    iterate,
)
from tests.support.scripted_openai import ScriptedOpenAIServer

T = datetime(2022, 3, 2, 18, 0, tzinfo=UTC)
HITS = [
    Candidate("message", "conv-42/D1:3", 0.033, 1, ("vector", "fulltext"),
              "I won my first Valorant tournament last week!", "Nate", T),
    Candidate("message", "conv-42/D1:4", 0.012, 2, ("neighbour",), "Congrats! Which game?",
              "Joanna", T),
    Candidate("message", "conv-42/D9:1", 0.030, 3, ("vector",),
              "Counter-Strike is still my favourite, I play it every night.", "Nate", T),
]


def _view(question: str = "What video games does Nate play?", hits: list[Candidate] = HITS,
          max_queries: int = 2) -> View:
    pool = Pool()
    pool.add(question, 1, hits)
    return View(question, 1, (question,), {question: hits}, pool.ranked(), (), (), 5,
                max_queries, Budget(10))


def _client(srv: ScriptedOpenAIServer, mode: str = "json_object") -> LLMClient:
    return LLMClient(LLMSettings(base_url=srv.base_url, model="scripted-model", max_retries=1,
                                 backoff_base_s=0, json_mode=mode))  # type: ignore[arg-type]


def test_llm_decider_maps_short_ids_back_and_accounts_the_call() -> None:
    with ScriptedOpenAIServer() as srv:
        srv.reply_json({"keep": ["c1", "c2"], "queries": ["Nate Xenoblade"], "sufficient": False})
        client = _client(srv, "json_schema")
        d = LLMDecider(client).decide(_view())
        # pool order is by score: c1 = D1:3, c2 = D9:1, c3 = D1:4
        assert d.keep == (("message", "conv-42/D1:3"), ("message", "conv-42/D9:1"))
        assert d.queries == ("Nate Xenoblade",) and not d.sufficient
        assert set(d.dropped) == {("message", "conv-42/D1:4")}
        body = srv.requests[0]
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        assert '"keep": ["c1", "c3"]' in system  # the worked example, realistic ids
        assert "[c1] 2022-03-02 Nate: I won my first Valorant" in user
        assert "conv-42" not in user  # real ids never reach the model
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["keep"]["items"]["enum"] == ["c1", "c2", "c3"]
        assert schema["properties"]["queries"]["maxItems"] == 2
        totals = client.ledger.totals()["decide"]
        assert (totals.calls, totals.attempts, totals.failures) == (1, 1, 0)


@pytest.mark.parametrize("bad", [
    "sure, keep c1",                                                       # not JSON
    json.dumps({"keep": ["c9"], "queries": [], "sufficient": True}),       # unknown id
    json.dumps({"keep": [], "queries": ["a", "b", "c"], "sufficient": False}),  # > L queries
    json.dumps({"keep": "c1", "queries": [], "sufficient": False}),        # wrong type
])
def test_malformed_reply_is_corrected_then_used(bad: str) -> None:
    with ScriptedOpenAIServer() as srv:
        srv.reply_text(bad)
        srv.reply_json({"keep": ["c1"], "queries": [], "sufficient": True})
        client = _client(srv)
        d = LLMDecider(client).decide(_view())
        assert d.keep == (("message", "conv-42/D1:3"),) and d.sufficient
        second = srv.requests[1]["messages"]
        assert second[-2] == {"role": "assistant", "content": bad}
        assert "could not be used" in second[-1]["content"]
        totals = client.ledger.totals()["decide"]
        assert (totals.calls, totals.attempts, totals.failures) == (1, 2, 0)
        assert totals.prompt_tokens == 22  # both attempts' tokens count


def test_failure_for_good_raises_and_the_loop_falls_back() -> None:
    with ScriptedOpenAIServer() as srv:
        srv.default(text="no json here")
        client = _client(srv)
        decider = LLMDecider(client)
        with pytest.raises(DeciderFailed):
            decider.decide(_view())
        out = iterate("What video games does Nate play?", lambda q: HITS, decider,
                      Bounds(fallback=2), Budget(items=3))
        assert out.stop == "decider_failed"
        assert [k[1] for k in out.core] == ["conv-42/D1:3", "conv-42/D9:1"]
        assert [f.key[1] for f in out.items] == ["conv-42/D1:3", "conv-42/D9:1", "conv-42/D1:4"]
        totals = client.ledger.totals()["decide"]
        assert totals.failures == 2 and totals.attempts == 4  # 2 calls x (1 + 1 retry)


def test_server_errors_are_retried_then_fall_back() -> None:
    with ScriptedOpenAIServer() as srv:
        srv.reply_status(500)
        srv.reply_json({"keep": [], "queries": ["Nate tournament"], "sufficient": False})
        d = LLMDecider(_client(srv)).decide(_view())
        assert d.queries == ("Nate tournament",)
        srv.default(status=500)
        with pytest.raises(DeciderFailed):
            LLMDecider(_client(srv)).decide(_view())


def test_prompt_limits_and_safety() -> None:
    long = Candidate("message", "x", 0.1, 1, ("vector",), "a\u202e" + "word " * 200, "Ann", T)
    msgs = prompts_decide.decide_messages("q?", ("q?",), [], [long], 3, 4)
    user = msgs[1]["content"]
    assert "\u202e" not in user and " ..." in user and "cite only c1." in user
    assert "Keep at most 4 candidates. Ask at most 3 new queries." in user


def test_offline_helpers() -> None:
    q = "What do both Joanna and Nate appreciate the beauty of?"
    assert names(q) == ["Joanna", "Nate"]
    assert split_people(q, names(q)) == [
        "What do both Joanna appreciate the beauty of?",
        "What do both Nate appreciate the beauty of?"]
    assert split_people("What does Nate play?", ["Nate"]) == []
    assert statement("When did Melanie go camping in June?") == "Melanie go camping in June"


def test_offline_decider_follow_ups_keep_and_bounds() -> None:
    d = OfflineDecider().decide(_view())
    assert len(d.queries) <= 2
    assert any("valorant" in q for q in d.queries)  # pseudo-relevance feedback
    assert all(k in {c.key for c in HITS} for k in d.keep)
    when_q = "When did Nate win his first Valorant tournament?"
    when = OfflineDecider(time_follow_up=True, lists_only=False).decide(_view(when_q))
    assert any(q.endswith("in March 2022") for q in when.queries)  # time-anchored
    assert not OfflineDecider().decide(_view(when_q)).queries  # one answer: no follow-up
    assert not OfflineDecider().decide(_view(max_queries=0)).queries
