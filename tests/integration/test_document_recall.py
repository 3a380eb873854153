"""Documents in the shared search and context, on the real Neo4j: `POST /v1/search` with units
chunks (citations, filters, neighbours, refusals), `POST /v1/context` mixing chunks with
messages under one budget, `as_of` reading the version valid then, owners kept apart, and the
Python client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.config import Settings, hash_api_key
from graphmem.retrieval.context import estimate_tokens
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg
from tests.integration.test_documents import _json
from tests.support.live_server import serve

PLAN_V1 = "# Plan\n\nWe meet on Mondays at nine.\n\n## Food\n\nLunch is pizza on Fridays.\n"
PLAN_V2 = "# Plan\n\nWe meet on Tuesdays at ten.\n\n## Food\n\nLunch is pizza on Fridays.\n"


def _owner() -> str:
    return f"rec-{uuid.uuid4().hex[:10]}"


def _post(api: TestClient, path: str, body: dict[str, Any], key: str = "key-a") -> Any:
    r = api.post(path, json=body, headers=auth(key))
    assert r.status_code in (200, 201), r.text
    return r.json()


def _text(api: TestClient, id_: str) -> str:
    got = api.get(f"/v1/documents/{id_}", params={"with_text": "true"}, headers=auth()).json()
    text: str = got["text"]
    return text


@pytest.fixture
def owner(api: TestClient) -> Iterator[str]:
    """An owner with the onboarding guide (metadata team=it), a note, and a plan in two
    versions (Mondays from 2026-01-01, Tuesdays from 2026-02-01)."""
    who = _owner()
    _post(api, "/v1/documents", _json(who, "guide.md", metadata={"team": "it"}))
    _post(api, "/v1/documents", _json(who, "note.txt", metadata={"team": "field"}))
    body = {"owner": who, "key": "plan", "media_type": "text/markdown"}
    _post(api, "/v1/documents", {**body, "content": PLAN_V1,
                                 "valid_from": "2026-01-01T00:00:00Z"})
    _post(api, "/v1/documents", {**body, "content": PLAN_V2,
                                 "valid_from": "2026-02-01T00:00:00Z"})
    yield who
    api.delete(f"/v1/owners/{who}", headers=auth())


def test_search_returns_chunks_with_citations(api: TestClient, owner: str) -> None:
    out = _post(api, "/v1/search", {"owner": owner, "query": "how often do passwords rotate",
                                    "units": "chunks", "k": 3})
    assert out["hits"] == [] and out["method"] == "rrf" and 1 <= len(out["chunks"]) <= 3
    best = out["chunks"][0]
    assert "ninety days" in best["text"] and best["key"] == "guide.md"
    assert best["section"] == ["Onboarding guide", "Accounts", "Passwords"]
    assert best["version"] == 1 and best["core"] and best["valid_from"]
    for c in out["chunks"]:  # the exact text at its offsets in its version
        assert _text(api, c["document_id"])[c["start"]:c["end"]] == c["text"]
    assert "## document" in out["context"] and "ninety days" in out["context"]
    assert out["context_tokens"] == estimate_tokens(out["context"])
    only = _post(api, "/v1/search", {"owner": owner, "query": "passwords and tides",
                                     "units": "chunks", "documents": ["note.txt"]})
    assert only["chunks"] and {c["key"] for c in only["chunks"]} == {"note.txt"}
    team = _post(api, "/v1/search", {"owner": owner, "query": "passwords and tides",
                                     "units": "chunks", "metadata": {"team": "it"}})
    assert team["chunks"] and {c["key"] for c in team["chunks"]} == {"guide.md"}
    around = _post(api, "/v1/search", {"owner": owner, "query": "pizza lunch", "k": 1,
                                       "units": "chunks", "documents": ["guide.md"],
                                       "expand": {"before": 1, "after": 1}})
    assert around["chunks"][0]["core"]
    assert all(not c["core"] and c["score"] == 0 for c in around["chunks"][1:])


def test_a_topic_narrows_chunks_to_its_documents(api: TestClient, memory: Memory,
                                                owner: str) -> None:
    memory.for_tenant("tenant-a").documents.build_topics(owner)
    tree = api.get("/v1/topics", params={"owner": owner}, headers=auth()).json()
    topic = next(t for t in tree if t["level"] == 1)
    members = {m["key"] for m in api.get(f"/v1/topics/{topic['id']}",
                                         headers=auth()).json()["members"]}
    assert members
    q = {"owner": owner, "query": "passwords tides meetings lunch", "k": 20}
    found = _post(api, "/v1/search", {**q, "units": "chunks", "topic": topic["id"]})["chunks"]
    assert found and {c["key"] for c in found} <= members
    ctx = _post(api, "/v1/context", {**q, "units": ["chunk"], "topic": topic["id"]})
    assert ctx["items"] and {i["key"] for i in ctx["items"]} <= members
    other = sorted({"guide.md", "note.txt", "plan"} - members)
    if other:  # a topic and keys outside it leave nothing
        none = _post(api, "/v1/search", {**q, "units": "chunks", "topic": topic["id"],
                                         "documents": other})
        assert none["chunks"] == [] and none["context"] == ""
    for bad in ("tp-never-built", topic["id"]):  # unknown, and another owner's: the same
        r = api.post("/v1/search", json={**q, "owner": owner if bad != topic["id"]
                                         else _owner(), "units": "chunks", "topic": bad},
                     headers=auth())
        assert r.status_code == 422 and r.json()["field"] == "topic", r.text


@pytest.mark.parametrize(("extra", "field"), [
    ({"session_id": "s1"}, "session_id"), ({"max_messages": 5}, "max_messages"),
    ({"order": "time"}, "order"), ({"k": 150}, "k"),
    ({"expand": {"before": 5, "after": 0}}, "expand"),
    ({"metadata": {"team": {"in": ["it"]}}}, "metadata"),
])
def test_search_refuses_what_chunks_do_not_have(api: TestClient, extra: dict[str, Any],
                                                field: str) -> None:
    r = api.post("/v1/search", json={"owner": "o", "query": "q", "units": "chunks", **extra},
                 headers=auth())
    assert r.status_code == 422 and r.json()["field"] == field, r.text
    for only in ({"documents": ["a"]}, {"topic": "tp-1"}):
        r = api.post("/v1/search", json={"owner": "o", "query": "q", **only}, headers=auth())
        assert r.status_code == 422 and r.json()["field"] == next(iter(only))


def test_as_of_reads_the_version_valid_then(api: TestClient, owner: str) -> None:
    q = {"owner": owner, "query": "when do we meet", "units": "chunks", "k": 1,
         "documents": ["plan"]}
    now = _post(api, "/v1/search", q)["chunks"][0]
    then = _post(api, "/v1/search", {**q, "as_of": "2026-01-15T00:00:00Z"})["chunks"][0]
    assert "Tuesdays" in now["text"] and now["version"] == 2
    assert "Mondays" in then["text"] and then["version"] == 1
    assert then["valid_from"].startswith("2026-01-01")
    ctx = _post(api, "/v1/context", {"owner": owner, "query": "when do we meet",
                                     "units": ["chunk"], "documents": ["plan"],
                                     "as_of": "2026-01-15T00:00:00Z"})
    assert "Mondays" in ctx["context"] and "Tuesdays" not in ctx["context"]
    assert {i["version"] for i in ctx["items"]} == {1}
    before = _post(api, "/v1/context", {"owner": owner, "query": "when do we meet",
                                        "units": ["chunk"], "as_of": "2025-06-01T00:00:00Z",
                                        "documents": ["plan"]})
    assert before["items"] == [] and before["context"] == ""


def test_context_mixes_messages_and_chunks_within_the_budget(api: TestClient,
                                                             owner: str) -> None:
    turns = ["I keep forgetting my password, it expired again.",
             "The service desk said passwords rotate every ninety days.",
             "We should have lunch on Friday."]
    _post(api, "/v1/messages", {"messages": [msg(i, owner, text=t)
                                             for i, t in enumerate(turns)]})
    body = {"owner": owner, "query": "how often do passwords rotate?",
            "units": ["message", "chunk"], "k": 3, "trace": True}
    out = _post(api, "/v1/context", {**body, "max_tokens": 2000})
    units = [i["unit"] for i in out["items"]]
    assert "message" in units and "chunk" in units
    assert out["context_tokens"] == estimate_tokens(out["context"]) <= 2000
    for item in out["items"]:
        assert f"[{item['evidence']}]" in out["context"]
        if item["unit"] == "chunk":  # the citation: version, section, exact offsets
            assert item["sources"] == [item["document_id"]] and item["key"] in (
                "guide.md", "note.txt", "plan")
            assert _text(api, item["document_id"])[item["start"]:item["end"]] == item["text"]
            assert item["section"] is not None and item["version"] >= 1
    assert {"unit": "chunk", "method": "rrf", "found": 3} in out["trace"]["searches"]
    small = _post(api, "/v1/context", {**body, "max_tokens": 120})
    assert small["context_tokens"] <= 120 and small["trace"]["over_budget"]
    assert len(small["items"]) < len(out["items"])


def test_without_documents_the_context_is_unchanged(api: TestClient) -> None:
    who = _owner()
    _post(api, "/v1/messages", {"messages": [msg(i, who, text=t) for i, t in enumerate(
        ["My password expired.", "Ask the service desk for a new one."])]})
    try:
        q = {"owner": who, "query": "what about my password?", "as_of": "2030-01-01T00:00:00Z"}
        plain = _post(api, "/v1/context", {**q, "units": ["message"]})
        mixed = _post(api, "/v1/context", {**q, "units": ["message", "chunk"]})
        assert mixed["context"] == plain["context"] and mixed["items"] == plain["items"]
        assert "## document" not in mixed["context"]
    finally:
        api.delete(f"/v1/owners/{who}", headers=auth())


def test_a_key_for_alice_never_sees_bobs_chunks(limited: dict[str, Any]) -> None:
    c, alice, bob = limited["client"], limited["alice"], limited["bob"]
    _post(c, "/v1/documents", _json(bob, "guide.md"), "full")
    _post(c, "/v1/documents", _json(alice, "note.txt"), "alice")
    for path, body in (("/v1/search", {"units": "chunks"}),
                       ("/v1/context", {"units": ["chunk"]})):
        r = c.post(path, json={"owner": bob, "query": "passwords", **body},
                   headers=auth("alice"))
        assert r.status_code == 403, r.text
    mine = _post(c, "/v1/search", {"owner": alice, "query": "passwords rotate ninety days",
                                   "units": "chunks"}, "alice")["chunks"]
    assert mine and {h["key"] for h in mine} == {"note.txt"}
    ctx = _post(c, "/v1/context", {"owner": alice, "query": "passwords rotate ninety days",
                                   "units": ["chunk"]}, "alice")
    assert ctx["items"] and {i["key"] for i in ctx["items"]} == {"note.txt"}
    assert "ninety days" not in ctx["context"]  # the guide's line is bob's


def test_the_python_client_carries_chunks(settings: Settings, memory: Memory,
                                          tenant: str) -> None:
    from graphmem.api.app import create_app
    from graphmem.client import GraphMem
    from graphmem.documents.models import DocumentIn

    who = _owner()
    memory.for_tenant(tenant).documents.ingest(DocumentIn(
        owner=who, key="plan", media_type="text/markdown", content=PLAN_V2))
    s = settings.model_copy(update={"api_keys": {hash_api_key("py"): tenant}})
    with serve(create_app(s, memory)) as url, GraphMem(url, api_key="py") as gm:
        found = gm.search("when do we meet", who, units="chunks", documents=["plan"], k=1)
        assert found.chunks[0].key == "plan" and "Tuesdays" in found.chunks[0].text
        ctx = gm.context("when do we meet", who, units=["chunk"], documents=["plan"])
        assert ctx.items[0].unit == "chunk" and ctx.items[0].version == 1
        assert ctx.items[0].section == ["Plan"]
