"""Move a database to another embedding model: every stored vector (sentence units, facts,
episodes, turn windows, cases, document chunks; all tenants) is made again from the text it was
made from, in batches, a skill's from its supporting cases' vectors and a topic's from its
documents' chunks;
each node is marked with its model, so an interrupted run resumes where it stopped. A model of
other dimensions drops the vector indexes first; the last step records the model in the database
and (re)creates the indexes, waiting until they are ONLINE. Stop the API and the workers meanwhile:
a server still running the old model would write vectors of the old model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphmem.documents.service import TOPIC_CHUNKS
from graphmem.embeddings import Embedder
from graphmem.store import Store
from graphmem.store.vectors import PENDING, VectorStore


@dataclass
class ReembedReport:
    model: str
    dimensions: int
    previous: str | None
    indexes_rebuilt: bool
    nodes: dict[str, int] = field(default_factory=dict)


def reembed(store: Store, embedder: Embedder, batch: int = 256,
            progress: Callable[[str, int], None] | None = None) -> ReembedReport:
    """Re-embed everything with ``embedder``; ``progress(label, done)`` after each batch."""
    vectors = VectorStore(store)
    meta = store.embedding_meta()
    rebuild = meta is not None and meta["dimensions"] != embedder.dimensions
    if rebuild:
        vectors.drop_vector_indexes()
    report = ReembedReport(embedder.name, embedder.dimensions, meta["model"] if meta else None,
                           rebuild)
    for label in PENDING:
        done, last = 0, None
        while rows := vectors.pending(label, embedder.name, batch):
            eids = [r["eid"] for r in rows]
            if eids == last:  # nothing was marked: stop rather than loop
                raise RuntimeError(f"re-embedding {label}: a batch was not stored")
            last = eids
            made = embedder.embed([r["text"] for r in rows])
            done += vectors.write([{"eid": r["eid"], "embedding": v}
                                   for r, v in zip(rows, made, strict=True)], embedder.name)
            if progress is not None:
                progress(label, done)
        report.nodes[label] = done
    skills = 0
    while written := vectors.skills_from_cases(embedder.name, batch):  # after the cases
        skills += written
        if progress is not None:
            progress("Skill", skills)
    report.nodes["Skill"] = skills
    topics = 0
    while written := vectors.topics_from_chunks(embedder.name, batch, TOPIC_CHUNKS):
        topics += written
        if progress is not None:
            progress("Topic", topics)
    report.nodes["Topic"] = topics
    vectors.set_meta(embedder.name, embedder.dimensions)
    store.apply_schema(embedder.name, embedder.dimensions)
    return report
