"""The label list of chunk search against the real Neo4j: the topic whose label best matches
the query's words raises its documents' chunks (rule ``label``), beside or without the centroid
topic list; it is off by default, and harmless for an owner with no tree or a query no label
matches."""

from __future__ import annotations

from graphmem.documents.models import ChunkSearch, DocumentIn
from graphmem.documents.service import LABEL_WEIGHT, Documents
from graphmem.service import Memory
from tests.integration.test_documents import TOPIC_NOTES


def _documents(memory: Memory) -> Documents:
    return Documents(memory.settings, memory.embedder, memory.search_pool)


def test_the_label_list_raises_the_documents_of_the_topic_its_words_match(
        memory: Memory, tenant: str) -> None:
    docs, stores = _documents(memory), memory.stores(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            docs.ingest(stores, DocumentIn(owner="o", key=f"{group}/{i}", content=text))
    docs.build_topics(stores, "o")
    tops = [t for t in docs.topics(stores, "o") if t.level == 1]
    # a label word of each category: the label list raises that category's documents
    for t in tops:
        word = t.label.split(",")[0].strip()
        members = {m.key for m in docs.topic(stores, t.id).members}
        out = docs.search(stores, ChunkSearch(owner="o", query=f"what about {word}?", k=9),
                          label_weight=1.0)
        raised = {c.key for c in out.chunks if "label" in c.rules}
        assert raised and raised <= members, (word, raised, members)
    assert LABEL_WEIGHT == 0.0  # off by default: no chunk carries the rule
    plain = docs.search(stores, ChunkSearch(owner="o", query="rocket orbit", k=9))
    assert all("label" not in c.rules for c in plain.chunks)
    both = docs.search(stores, ChunkSearch(owner="o", query="rocket orbit", k=9),
                       topic_weight=1.0, label_weight=1.0)
    assert {"topic", "label"} <= {r for c in both.chunks for r in c.rules}


def test_the_label_list_is_harmless_without_a_tree_or_a_match(memory: Memory,
                                                               tenant: str) -> None:
    docs, stores = _documents(memory), memory.stores(tenant)
    for i, text in enumerate(TOPIC_NOTES["baking"]):
        docs.ingest(stores, DocumentIn(owner="o", key=f"b/{i}", content=text))
    q = ChunkSearch(owner="o", query="bread dough", k=3)
    before = docs.search(stores, q)
    assert [c.id for c in docs.search(stores, q, label_weight=1.0).chunks] == \
        [c.id for c in before.chunks]  # no tree yet: the same chunks
    docs.build_topics(stores, "o")
    none = docs.search(stores, ChunkSearch(owner="o", query="zzqx wwvy", k=3),
                       label_weight=1.0)
    assert all("label" not in c.rules for c in none.chunks)
    vector = docs.search(stores, ChunkSearch(owner="o", query="bread", k=3, method="vector"),
                         label_weight=1.0)
    assert vector.chunks and {"vector", "label"} >= {r for c in vector.chunks for r in c.rules}
