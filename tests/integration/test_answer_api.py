"""`POST /v1/answer` over HTTP on the real Neo4j, the reader played by the scripted
OpenAI-compatible test server (a test double): citations map back to context items, invented
ones are dropped and counted, a malformed reply is corrected or ends in a 502, usage is the
tenant's under operation ``answer``; without an LLM, a 501 naming the settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.integration.conftest import KEYS, auth
from tests.integration.helpers import msg, owner
from tests.support.scripted_openai import ScriptedOpenAIServer

TURNS = ["I started at a bookshop in Alfama last week.", "Which bookshop?",
         "Livraria do Simao, the tiny one near the cathedral."]
QUESTION = "Where does she work now?"


@pytest.fixture
def llm_api(settings: Settings, memory: Memory,
            srv: ScriptedOpenAIServer) -> Iterator[TestClient]:
    """The app over the test Neo4j with the scripted server as its LLM (one retry)."""
    s = settings.model_copy(update={
        "api_keys": {hash_api_key(k): t for k, t in KEYS.items()},
        "llm_base_url": srv.base_url, "llm_model": "scripted-model", "llm_max_retries": 1})
    mem = Memory(s, memory.store, memory.embedder)  # shares the store: never closed here
    try:
        with TestClient(create_app(s, mem)) as client:
            yield client
    finally:
        assert mem.reader is not None
        mem.reader.close()


@pytest.fixture
def who(llm_api: TestClient) -> Iterator[str]:
    name = owner()
    body = {"messages": [msg(i, name, text=t) for i, t in enumerate(TURNS)]}
    assert llm_api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    yield name
    llm_api.delete(f"/v1/owners/{name}", headers=auth())


def answer_usage(client: TestClient) -> dict[str, int]:
    """Tenant-a's totals of operation ``answer`` (other tests add to them: compare deltas)."""
    totals = client.get("/v1/usage", headers=auth()).json()["totals"]
    empty = {"calls": 0, "failures": 0, "prompt_tokens": 0, "completion_tokens": 0}
    out: dict[str, int] = totals.get("answer", empty)
    return out


def ask(client: TestClient, who: str, status: int = 200, **extra: Any) -> dict[str, Any]:
    body = {"query": QUESTION, "owner": who, "units": ["message"], **extra}
    r = client.post("/v1/answer", json=body, headers=auth())
    assert r.status_code == status, r.text
    out: dict[str, Any] = r.json()
    return out


def test_answer_cites_context_items(llm_api: TestClient, who: str,
                                    srv: ScriptedOpenAIServer) -> None:
    srv.reply_json({"answer": "Livraria do Simao in Alfama", "citations": ["e3", "E1", "e42"],
                    "insufficient": False}, prompt_tokens=300, completion_tokens=20)
    before = answer_usage(llm_api)
    got = ask(llm_api, who)
    items = {i["evidence"]: i for i in got["context"]["items"]}
    assert set(items) == {"e1", "e2", "e3"}
    assert got["answer"] == "Livraria do Simao in Alfama" and got["insufficient"] is False
    assert [(c["evidence"], c["id"]) for c in got["citations"]] == [
        ("e3", items["e3"]["id"]), ("e1", items["e1"]["id"])]
    assert got["invented_citations"] == ["e42"]
    assert got["sources"] == [items["e3"]["id"], items["e1"]["id"]]
    assert (got["model"], got["prompt_tokens"], got["completion_tokens"]) == (
        "scripted-model", 300, 20)
    (request,) = srv.requests
    prompt = request["messages"][1]["content"]
    assert QUESTION in prompt and "cite only e1 .. e3" in prompt
    assert got["context"]["context"] in prompt and "[e3] " in prompt
    assert request["temperature"] == 0.0
    usage = answer_usage(llm_api)
    assert (usage["calls"] - before["calls"], usage["prompt_tokens"] - before["prompt_tokens"],
            usage["completion_tokens"] - before["completion_tokens"]) == (1, 300, 20)
    assert llm_api.get("/v1/usage", headers=auth("key-b")).json()["totals"] == {}


def test_malformed_reply_is_corrected(llm_api: TestClient, who: str,
                                      srv: ScriptedOpenAIServer) -> None:
    srv.reply_text("The answer is Alfama.")
    srv.reply_json({"answer": "Alfama", "citations": ["e1"], "insufficient": False})
    got = ask(llm_api, who)
    assert got["answer"] == "Alfama" and got["citations"][0]["evidence"] == "e1"
    assert len(srv.requests) == 2
    assert "could not be used" in srv.requests[1]["messages"][-1]["content"]


def test_malformed_replies_end_in_a_502(llm_api: TestClient, who: str,
                                        srv: ScriptedOpenAIServer) -> None:
    srv.default(text="{not json")
    before = answer_usage(llm_api)
    got = ask(llm_api, who, status=502)
    assert got["status"] == 502 and "answer" in got["detail"]
    assert len(srv.requests) == 2  # one retry
    after = answer_usage(llm_api)
    assert (after["calls"] - before["calls"], after["failures"] - before["failures"]) == (1, 1)


def test_insufficient_and_empty_contexts(llm_api: TestClient, who: str,
                                         srv: ScriptedOpenAIServer) -> None:
    srv.reply_json({"answer": "", "citations": [], "insufficient": True})
    got = ask(llm_api, who, query="What is her sister's name?")
    assert (got["answer"], got["insufficient"], got["citations"]) == ("", True, [])
    nobody = ask(llm_api, owner())  # nothing stored: no call, insufficient
    assert nobody["insufficient"] is True and nobody["context"]["items"] == []
    assert len(srv.requests) == 1


def test_no_llm_is_a_501_naming_the_settings(api: TestClient) -> None:
    r = api.post("/v1/answer", json={"query": QUESTION, "owner": "o"}, headers=auth())
    assert r.status_code == 501
    assert r.headers["content-type"].startswith("application/problem+json")
    detail = r.json()["detail"]
    assert "GRAPHMEM_LLM_BASE_URL" in detail and "GRAPHMEM_LLM_MODEL" in detail
    bad = api.post("/v1/answer", json={"query": "", "owner": "o"}, headers=auth())
    assert bad.status_code == 422 and bad.json()["field"] == "query"


def test_openapi_declares_the_answers_errors(api: TestClient) -> None:
    doc = api.get("/openapi.json").json()
    responses = doc["paths"]["/v1/answer"]["post"]["responses"]
    assert {"200", "422", "501", "502", "503"} <= set(responses)
    assert "501" not in doc["paths"]["/v1/context"]["post"]["responses"]
