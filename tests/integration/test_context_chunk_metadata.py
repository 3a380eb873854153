"""`POST /v1/context` with a metadata filter and unit chunk, on the real Neo4j: the chunks come
from the documents whose metadata holds each value given (exact values), the messages from the
messages whose metadata matches, in one budget; lists and operators are refused with 422 naming
metadata when chunks are asked for (the chunk search matches exact values), as are units that
carry no metadata."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from graphmem.models import ContextRequest
from tests.integration.helpers import msg
from tests.integration.test_document_recall import _post, owner

__all__ = ["owner"]


def test_context_chunks_follow_the_documents_metadata(api: TestClient, owner: str) -> None:
    turns = [("Passwords rotate every ninety days, said the desk.", "it"),
             ("The tide tables are in the field note.", "field")]
    _post(api, "/v1/messages", {"messages": [msg(i, owner, text=t, metadata={"team": team})
                                             for i, (t, team) in enumerate(turns)]})
    q = {"owner": owner, "query": "passwords tides meetings lunch", "k": 10}
    plain = _post(api, "/v1/context", {**q, "units": ["chunk"]})
    assert {i["key"] for i in plain["items"]} >= {"guide.md", "note.txt"}
    it = _post(api, "/v1/context", {**q, "units": ["chunk"], "metadata": {"team": "it"}})
    assert it["items"] and {i["key"] for i in it["items"]} == {"guide.md"}
    both = _post(api, "/v1/context", {**q, "units": ["message", "chunk"],
                                      "metadata": {"team": "field"}})
    chunks = [i for i in both["items"] if i["unit"] == "chunk"]
    messages = [i for i in both["items"] if i["unit"] == "message"]
    assert chunks and {i["key"] for i in chunks} == {"note.txt"}
    assert messages and all("tide" in i["text"] for i in messages if i["core"])
    none = _post(api, "/v1/context", {**q, "units": ["chunk"], "metadata": {"team": "hr"}})
    assert none["items"] == [] and none["context"] == ""


@pytest.mark.parametrize("body", [
    {"units": ["chunk"], "metadata": {"team": ["it", "field"]}},
    {"units": ["message", "chunk"], "metadata": {"team": {"ne": "it"}}},
    {"units": ["chunk", "fact"], "metadata": {"team": "it"}},
])
def test_what_chunks_cannot_match_is_refused(api: TestClient, owner: str,
                                             body: dict[str, object]) -> None:
    r = api.post("/v1/context", json={"owner": owner, "query": "q", **body},
                 headers={"Authorization": "Bearer key-a"})
    assert r.status_code == 422, r.text
    assert "metadata" in r.text


def test_the_request_model_takes_chunk_with_exact_values() -> None:
    ok = ContextRequest(query="q", owner="o", units=["message", "chunk", "skill"],
                        metadata={"team": "it", "n": 1})
    assert ok.metadata == {"team": "it", "n": 1}
    assert ContextRequest(query="q", owner="o", metadata={"a": 1}).units == ["message"]
    with pytest.raises(ValueError, match="no lists or operators"):
        ContextRequest(query="q", owner="o", units=["chunk"], metadata={"a": [1, 2]})
