"""Category-related lists of chunk search against the real Neo4j: the topic list and the
collapsed-tree list (topics and sections) run, are off by default, and raise what they should."""

from __future__ import annotations

from graphmem.documents.models import ChunkSearch, DocumentIn
from graphmem.documents.service import Documents
from graphmem.service import Memory
from tests.integration.test_documents import TOPIC_NOTES

GUIDE = """# Glacier field guide

## Ice

Glacier ice forms from snow pressed over many winters.

The ice flows downhill under its own weight.

## Rivers

Meltwater leaves the glacier snout as a braided river.
"""


def _documents(memory: Memory) -> Documents:
    return Documents(memory.settings, memory.embedder, memory.search_pool)


def test_the_topic_and_tree_lists_run_and_are_off_by_default(memory: Memory,
                                                             tenant: str) -> None:
    docs = _documents(memory)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            docs.ingest(memory.stores(tenant),
                        DocumentIn(owner="o", key=f"{group}/{i}", content=text))
    docs.ingest(memory.stores(tenant), DocumentIn(owner="o", key="guide", content=GUIDE,
                                   media_type="text/markdown"))
    docs.build_topics(memory.stores(tenant), "o")
    query = "How does glacier ice form from snow?"
    plain = docs.search(memory.stores(tenant), ChunkSearch(owner="o", query=query, k=5))
    assert plain.chunks and all(set(c.rules) <= {"vector", "fulltext", "rerank"}
                               for c in plain.chunks)

    both = docs.search(memory.stores(tenant),
                       ChunkSearch(owner="o", query=query, k=5), topic_weight=1.0,
                       tree_weight=1.0)
    top = both.chunks[0]
    assert top.key.startswith("glaciers/") or top.key == "guide"
    rules = {r for c in both.chunks for r in c.rules}
    assert {"topic", "tree"} <= rules
    # the topic list raises only the chunks of the nearest topic's documents: the glaciers
    raised = {c.key.split("/")[0] for c in both.chunks if "topic" in c.rules}
    assert raised and raised <= {"glaciers", "guide"}

    store = memory.stores(tenant).documents
    vector = memory.embedder.embed([query])[0]
    ids = [c.id for c in both.chunks if c.key == "guide"]
    sections = store.section_match(ids, vector)
    assert sections and all(0.0 <= s["score"] <= 1.0 and s["chunks"] >= 1 for s in sections)
    assert {h for s in sections for h in s["hits"]} == set(ids)
    assert store.topic_match("nobody", vector, 3) == []


def test_the_lists_are_harmless_without_a_topic_tree(memory: Memory, tenant: str) -> None:
    docs = _documents(memory)
    docs.ingest(memory.stores(tenant),
                DocumentIn(owner="p", key="k", content="Bread rises with yeast."))
    found = docs.search(memory.stores(tenant), ChunkSearch(owner="p", query="yeast bread", k=3),
                        topic_weight=1.0, tree_weight=1.0)
    assert [c.key for c in found.chunks] == ["k"]
    assert "topic" not in found.chunks[0].rules
