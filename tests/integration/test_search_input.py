"""Search against the real Neo4j with hostile query text and hostile stored text: a query of any
length answers 200 (never Lucene's TooManyClauses), and control characters never reach the
rendered context while the stored text keeps them."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from graphmem.retrieval.fulltext import MAX_CLAUSES
from graphmem.service import Memory
from graphmem.store.tenant import Filters
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner


def _words(n: int) -> list[str]:
    """n distinct words, none a stop word (w0, w1, ...)."""
    return [f"w{i}" for i in range(n)]


LONG_QUERIES = {
    "distinct words": " ".join(_words(2000))[:4000],
    "one word repeated": ("lisbon " * 600)[:4000],
    "distinct words and punctuation": " ".join(f"{w}?!" for w in _words(1000))[:4000],
    "ideographs": "".join(chr(0x4E00 + i) for i in range(4000)),
}


@pytest.mark.parametrize("method", ["fulltext", "rrf_expand"])
@pytest.mark.parametrize("name", sorted(LONG_QUERIES))
def test_a_4000_character_query_answers_200(api: TestClient, name: str, method: str) -> None:
    who = owner()
    body = {"messages": [msg(0, who, text="we moved to lisbon, w1 and w2"),
                         msg(1, who, text="nothing to see here")]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    query = LONG_QUERIES[name]
    assert len(query) == 4000
    r = api.post("/v1/search", json={"query": query, "owner": who, "method": method},
                 headers=auth())
    assert r.status_code == 200, r.text
    if name in ("one word repeated", "distinct words"):  # the kept terms still find the turn
        assert f"{who}-s1-0" in [h["id"] for h in r.json()["hits"]]


def test_lucene_really_refuses_more_clauses_than_the_cap_allows(memory: Memory) -> None:
    """Why the cap exists: the same store call with 1,100 distinct terms fails, with the capped
    query it answers."""
    store = memory.store.tenant("t-lucene-limit")
    with pytest.raises(Exception, match=r"(?i)clause"):
        store.fulltext_search("nobody", " ".join(_words(1100)), 10, 1, Filters())
    assert store.fulltext_search("nobody", " ".join(_words(MAX_CLAUSES)), 10, 1, Filters()) == []


def test_control_characters_stay_stored_but_not_in_the_context(api: TestClient) -> None:
    who = owner()
    text = "pay \u202eolleh\u202c now\x00 at\x1b[31m lisbon\u2066 tomorrow\r\nok"
    body = {"messages": [msg(0, who, text=text, speaker="mal\u200flory")]}
    assert api.post("/v1/messages", json=body, headers=auth()).status_code == 201
    assert api.get(f"/v1/messages/{who}-s1-0", headers=auth()).json()["text"] == text
    r = api.post("/v1/search", json={"query": "pay lisbon", "owner": who}, headers=auth())
    assert r.status_code == 200, r.text
    found = r.json()
    assert [h["text"] for h in found["hits"]] == [text]  # hits carry the stored text
    context = found["context"]
    assert "pay olleh now at[31m lisbon tomorrow" in context and "mallory" in context
    assert not any(c in context for c in "\x00\x1b\r\u202e\u202c\u2066\u200f")
