"""The work of one write is bounded: a batch over the character, unit or word-piece budget is
refused with a 413 problem naming `messages` before anything is embedded or written; a maximal
long message is stored with at most `max_units_per_message` passage units."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.config import Settings
from graphmem.errors import TooLarge
from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner


def _refused(r: Any, limit: int, figure: int) -> None:
    assert r.status_code == 413, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    assert body["status"] == 413 and body["field"] == "messages"
    assert f"at most {limit}" in body["detail"] and str(figure) in body["detail"]
    assert body["errors"][0]["field"] == "messages"


def _count(cypher: Any, label: str, who: str) -> int:
    n: int = cypher(f"MATCH (x:{label} {{owner: $o}}) RETURN count(x) AS n", o=who)[0]["n"]
    return n


def test_batch_over_the_character_budget_is_refused(
    api: TestClient, settings: Settings, cypher: Any
) -> None:
    who = owner()
    n = settings.max_batch_chars // settings.max_text_chars + 1  # each text within its own cap
    text = ("Some words here. " * (settings.max_text_chars // 17)).strip()
    batch = [msg(i, who, text=text) for i in range(n)]
    total = sum(len(m["text"]) for m in batch)
    _refused(api.post("/v1/messages", json={"messages": batch}, headers=auth()),
             settings.max_batch_chars, total)
    assert _count(cypher, "Message", who) == 0
    assert _count(cypher, "Sentence", who) == 0


def test_batch_over_the_unit_budget_is_refused(
    api: TestClient, settings: Settings, cypher: Any
) -> None:
    who = owner()
    per = settings.max_batch_units // settings.max_batch + 1  # sentences per message
    batch = [msg(i, who, text=" ".join(f"S{j}." for j in range(per)))
             for i in range(settings.max_batch)]
    _refused(api.post("/v1/messages", json={"messages": batch}, headers=auth()),
             settings.max_batch_units, per * settings.max_batch)
    assert _count(cypher, "Message", who) == 0


def test_batch_over_the_word_piece_budget_is_refused(
    api: TestClient, settings: Settings, cypher: Any
) -> None:
    """Four maximal English texts are within the character budget, but embedding them would
    read ~87,000 word pieces: refused before the model runs."""
    who = owner()
    sentence = "We walked along the river in Lisbon and talked about moving there next spring. "
    text = (sentence * (settings.max_text_chars // len(sentence) + 1))[: settings.max_text_chars]
    batch = [msg(i, who, text=text) for i in range(4)]
    r = api.post("/v1/messages", json={"messages": batch}, headers=auth())
    assert r.status_code == 413, r.text
    body = r.json()
    assert body["field"] == "messages" and "word pieces" in body["detail"]
    assert f"at most {settings.max_batch_tokens}" in body["detail"]
    assert _count(cypher, "Message", who) == 0


def test_maximal_long_message_is_stored_as_capped_passages(
    api: TestClient, settings: Settings, cypher: Any
) -> None:
    who = owner()
    sentence = "We walked along the river in Lisbon and talked about moving there next spring. "
    text = (sentence * (settings.max_text_chars // len(sentence) + 1))[: settings.max_text_chars]
    r = api.post("/v1/messages", json={"messages": [msg(0, who, text=text)]}, headers=auth())
    assert r.status_code == 201, r.text
    (message_id,) = r.json()["ids"]
    units = cypher("MATCH (s:Sentence {owner: $o})-[:PART_OF]->(m:Message) "
                   "RETURN s.idx AS idx, s.text AS text, s.message_id AS mid, m.id AS m "
                   "ORDER BY s.idx", o=who)
    assert 1 < len(units) <= settings.max_units_per_message
    assert [u["idx"] for u in units] == list(range(len(units)))
    assert {u["mid"] for u in units} == {u["m"] for u in units} == {message_id}
    assert " ".join(u["text"] for u in units).split() == text.split()
    hits = api.post("/v1/search", json={"query": "moving to Lisbon next spring", "owner": who,
                                        "method": "vector"}, headers=auth()).json()["hits"]
    assert [h["id"] for h in hits] == [message_id]


def test_bulk_path_has_the_same_bounds(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    per = memory.settings.max_batch_units // memory.settings.max_batch + 1
    ok = [MessageIn.model_validate(msg(0, who, session="ok"))]
    over = [MessageIn.model_validate(msg(i, who, text=" ".join(f"S{j}." for j in range(per))))
            for i in range(memory.settings.max_batch)]
    with pytest.raises(TooLarge) as info:
        list(memory.ops(tenant).ingest_many([ok, over]))
    assert info.value.field == "messages"
    assert info.value.limit == memory.settings.max_batch_units
    # the batch before the refused one is its own transaction and committed; nothing of it after
    assert cypher("MATCH (m:Message {tenant: $t, owner: $o}) RETURN m.session_id AS s",
                  t=tenant, o=who) == [{"s": "ok"}]


def test_passage_units_store_a_chat_turn_as_one_unit(memory: Memory, tenant: str,
                                                     cypher: Any) -> None:
    """With embedding_unit=passage a turn of several sentences is one vector, found by search
    like any other."""
    from graphmem.messages.ingest import Ingestor

    who = owner()
    turn = "We walked along the river. Lisbon was sunny! We might move there next spring."
    ingestor = Ingestor(memory.settings.model_copy(update={"embedding_unit": "passage"}),
                        memory.embedder)
    ingestor.ingest_batch(memory.store.tenant(tenant), [MessageIn.model_validate(
        msg(0, who, text=turn)), MessageIn.model_validate(msg(1, who, text="Nice. Tell me more."))])
    units = cypher("MATCH (s:Sentence {tenant: $t, owner: $o}) RETURN s.text AS text "
                   "ORDER BY s.message_id", t=tenant, o=who)
    assert [u["text"] for u in units] == [turn, "Nice. Tell me more."]
    hits = memory.for_tenant(tenant).search(SearchRequest(
        query="moving to Lisbon in spring", owner=who, method="vector")).hits
    assert hits[0].id == f"{who}-s1-0"
