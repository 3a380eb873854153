"""Topic placement on the real Neo4j: each new document version is placed by its own job
(``place_document``) under the category whose centroid is nearest, counts and times updated, the
tree left as it is; the tree is built again (``build_topics``) only once the versions stored
since the last build reach ``topic_rebuild_fraction`` of the owner's documents, and that build
keeps the ids of the topics whose members did not change. A new version of a key takes its
earlier version's place; a large version is placed when its embedding job ends."""

from __future__ import annotations

from typing import Any

from graphmem.config import Settings
from graphmem.documents.models import DocumentIn
from graphmem.documents.service import Documents
from graphmem.service import Memory

from .test_documents import TOPIC_NOTES
from .test_procedural import drain


def _jobs(memory: Memory, tenant: str, kind: str) -> list[Any]:
    return [j for j in memory.for_tenant(tenant).jobs.list(owner="o", limit=500).jobs
            if j.kind == kind]


def _builds(memory: Memory, tenant: str) -> int:
    """How many builds of o's tree were enqueued (each a generation of its job)."""
    return max((j.generation for j in _jobs(memory, tenant, "build_topics")), default=0)


def _groups(tm: Any) -> dict[str, tuple[str, ...]]:
    return {t.id: tuple(sorted(m.key for m in tm.documents.topic(t.id).members))
            for t in tm.documents.topics("o") if t.level == 1}


def test_a_new_document_is_placed_and_the_tree_rebuilt_once_enough_changed(
        memory: Memory, tenant: str) -> None:
    tm = memory.for_tenant(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            tm.documents.ingest(DocumentIn(owner="o", key=f"{group}/{i}", content=text))
    drain(memory, tenant)  # nine placements; the first, finding no tree, asks for a build
    assert len(_jobs(memory, tenant, "place_document")) == 9
    assert _builds(memory, tenant) >= 1
    built = _groups(tm)
    assert sorted(len(g) for g in built.values()) == [3, 3, 3]
    by_group = {g[0].split("/")[0]: id_ for id_, g in built.items()}

    # one new note of ten (10 % < 20 %): placed under rockets, nothing built
    builds = _builds(memory, tenant)
    tm.documents.ingest(DocumentIn(owner="o", key="rockets/3",
                                   content="The rocket reached orbit after its launch."))
    drain(memory, tenant)
    assert _builds(memory, tenant) == builds
    placed = _groups(tm)
    assert set(placed) == set(built)  # no topic made or dropped: ids as they were
    assert placed[by_group["rockets"]] == (*built[by_group["rockets"]], "rockets/3")
    rockets = tm.documents.topic(by_group["rockets"]).topic
    assert rockets.documents == 4
    assert {t.id: t.documents for t in tm.documents.topics("o") if t.level == 1} == {
        by_group["baking"]: 3, by_group["glaciers"]: 3, by_group["rockets"]: 4}

    # a second (2 of 11 < 20 %): placed too; a third (3 of 12 >= 20 %): the tree is built
    # again, and the category whose members did not change (glaciers) keeps its id
    tm.documents.ingest(DocumentIn(owner="o", key="rockets/4",
                                   content="A rocket launch puts a probe into orbit."))
    drain(memory, tenant)
    assert _builds(memory, tenant) == builds and set(_groups(tm)) == set(built)
    tm.documents.ingest(DocumentIn(owner="o", key="baking/3",
                                   content="Bread dough with yeast rises before it is baked."))
    drain(memory, tenant)
    assert _builds(memory, tenant) == builds + 1
    rebuilt = _groups(tm)
    assert rebuilt[by_group["glaciers"]] == built[by_group["glaciers"]]  # the same id
    assert sorted(len(g) for g in rebuilt.values()) == [3, 4, 5]
    assert by_group["rockets"] not in rebuilt and by_group["baking"] not in rebuilt

    # a new version of a glacier note (1 of 12 since the build) takes its earlier version's
    # place; the counts stay
    edited = tm.documents.ingest(DocumentIn(
        owner="o", key="glaciers/0", content="Glaciers retreat fast as warm summers melt ice."))
    drain(memory, tenant)
    assert _builds(memory, tenant) == builds + 1
    glaciers = tm.documents.topic(by_group["glaciers"])
    assert [m.id for m in glaciers.members if m.key == "glaciers/0"] == [edited.id]
    assert glaciers.topic.documents == 3 and len(glaciers.members) == 3
    again = memory.documents.place(memory.stores(tenant),
                                   edited.id)  # placed already: nothing to do
    assert again["placed"] == [] and not again["rebuild"]


def test_a_large_version_is_placed_when_its_embedding_job_ends(
        settings: Settings, memory: Memory, tenant: str) -> None:
    tm = memory.for_tenant(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            tm.documents.ingest(DocumentIn(owner="o", key=f"{group}/{i}", content=text))
    memory.documents.build_topics(memory.stores(tenant), "o")
    later = Documents(settings.model_copy(update={"document_inline_chunks": 0}),
                      memory.embedder)  # every chunk embedded by the worker
    wrote = later.ingest(memory.stores(tenant), DocumentIn(
        owner="o", key="baking/3", content="Knead the dough, let it rise, bake the bread."))
    assert wrote.state == "embedding"
    early = memory.documents.place(memory.stores(tenant), wrote.id)  # no embedding yet: not placed
    assert early["placed"] == [] and "not embedded" in early["skipped"]
    drain(memory, tenant)
    baking = next(t for t, g in _groups(tm).items() if "baking/0" in g)
    assert "baking/3" in {m.key for m in tm.documents.topic(baking).members}
