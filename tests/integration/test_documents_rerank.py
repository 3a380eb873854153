"""Learned re-ranking of chunk search against the real Neo4j: on by default with the shipped
ranker (re-ranked chunks carry the rule ``rerank`` and its probability as their score), off on
request, and without a ranker for the embedder the fused order stands with the reason logged."""

from __future__ import annotations

import logging

import pytest

from graphmem.documents import rerank as rr
from graphmem.documents.models import ChunkSearch, DocumentIn
from graphmem.documents.service import Documents
from graphmem.service import Memory

GUIDE = """# Glacier field guide

## Ice

Glacier ice forms from snow pressed over many winters.

The ice flows downhill under its own weight, a few metres a year.

## Rivers

Meltwater leaves the glacier snout as a braided river.

Rivers fed by glaciers run high on summer afternoons.
"""
QUERY = "How does glacier ice form from snow?"


def _seeded(memory: Memory, tenant: str) -> Documents:
    docs = Documents(memory.settings, memory.embedder, memory.search_pool)
    docs.ingest(memory.stores(tenant), DocumentIn(owner="o", key="guide", content=GUIDE,
                                                  media_type="text/markdown"))
    return docs


def test_search_re_ranks_with_the_shipped_ranker(memory: Memory, tenant: str) -> None:
    assert rr.for_embedder(memory.settings.embedder)[0] is not None
    docs = _seeded(memory, tenant)
    found = docs.search(memory.stores(tenant), ChunkSearch(owner="o", query=QUERY, k=3))
    assert found.chunks and all(rr.RULE in c.rules for c in found.chunks)
    assert all(0.0 < c.score < 1.0 for c in found.chunks)
    assert [c.score for c in found.chunks] == sorted((c.score for c in found.chunks),
                                                     reverse=True)
    assert "snow pressed" in found.chunks[0].text

    plain = docs.search(memory.stores(tenant), ChunkSearch(owner="o", query=QUERY, k=3),
                        rerank=False)
    assert plain.chunks and all(rr.RULE not in c.rules for c in plain.chunks)
    alone = docs.search(memory.stores(tenant),
                        ChunkSearch(owner="o", query=QUERY, k=3, method="fulltext"))
    assert all(rr.RULE not in c.rules for c in alone.chunks)  # one list: nothing to re-rank


def test_without_a_ranker_the_fused_order_stands_and_says_why(
        memory: Memory, tenant: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    docs = _seeded(memory, tenant)
    plain = docs.search(memory.stores(tenant), ChunkSearch(owner="o", query=QUERY, k=3),
                        rerank=False)
    monkeypatch.setattr(rr, "shipped", dict)
    monkeypatch.setattr(rr, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="graphmem.documents.rerank"):
        found = docs.search(memory.stores(tenant), ChunkSearch(owner="o", query=QUERY, k=3))
    assert [(c.id, c.score, c.rules) for c in found.chunks] == [
        (c.id, c.score, c.rules) for c in plain.chunks]
    said = [r.getMessage() for r in caplog.records if "fused order stands" in r.getMessage()]
    assert len(said) == 1 and repr(memory.settings.embedder) in said[0]
