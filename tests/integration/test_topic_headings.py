"""The lower levels of an owner's topic tree and its labels, on the real Neo4j: each filed
document's own headings hang under the deepest category it is in (GET /v1/topics, GET
/v1/topics/{id}, the topic_tree audit query), follow new versions and forgetting, keep their
ids across a rebuild; topic labels are matched by the topic_fulltext index (and topics written
before it are migrated); an LLM's labels and summaries (a scripted OpenAI-compatible server) are
stored with their model, survive a rebuild, and a failed call writes nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem.documents import labels
from graphmem.documents.models import DocumentIn, Topic
from graphmem.llm.client import LLMClient, LLMSettings
from graphmem.service import Memory
from graphmem.store import topic_index
from graphmem.store.documents import LABEL_TOPICS, DocumentStore
from graphmem.tenant_memory import TenantMemory
from tests.integration.conftest import auth
from tests.support.scripted_openai import ScriptedOpenAIServer

from .test_documents import TOPIC_NOTES

GUIDE = (Path(__file__).parents[1] / "fixtures" / "documents" / "guide.md").read_text()
PATHS = [["Onboarding guide"], ["Onboarding guide", "Accounts"],
         ["Onboarding guide", "Accounts", "Passwords"], ["Onboarding guide", "Expenses"]]


def _owner() -> str:
    return f"th-{uuid.uuid4().hex[:10]}"


def _notes(memory: Memory, tenant: str, owner: str) -> str:
    """TOPIC_NOTES and the onboarding guide stored for ``owner``; the guide's version id."""
    mem = memory.for_tenant(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            mem.documents.ingest(DocumentIn(owner=owner, key=f"{group}/{i}", content=text))
    return mem.documents.ingest(DocumentIn(owner=owner, key="guide.md", content=GUIDE,
                                           media_type="text/markdown")).id


def _headings(tree: list[Topic], document: str) -> dict[str, Topic]:
    return {t.id: t for t in tree if t.kind == "heading" and t.document == document}


def test_a_documents_headings_hang_under_its_deepest_category(memory: Memory,
                                                              tenant: str) -> None:
    mem, who = memory.for_tenant(tenant), _owner()
    guide = _notes(memory, tenant, who)
    built = mem.documents.build_topics(who)
    tree = mem.documents.topics(who)
    categories = {t.id: t for t in tree if t.kind == "category"}
    assert built["topics"] == len(categories) and all(t.level <= 2 for t in categories.values())
    home = [t for t in categories.values()
            if guide in {m.id for m in mem.documents.topic(t.id).members}]
    deepest = max(home, key=lambda t: t.level)
    heads = _headings(tree, guide)
    assert sorted(h.label for h in heads.values()) == sorted(p[-1] for p in PATHS)
    by_label = {h.label: h for h in heads.values()}
    top = by_label["Onboarding guide"]
    assert top.parent == deepest.id and top.level == deepest.level + 1
    assert by_label["Accounts"].parent == top.id and by_label["Accounts"].level == top.level + 1
    assert by_label["Passwords"].parent == by_label["Accounts"].id
    assert by_label["Passwords"].level == deepest.level + 3
    assert all(h.key == "guide.md" and h.documents == 1 and h.id.startswith(guide + ":s")
               for h in heads.values())
    # the tree lists parents before children, categories before headings of a level
    place = {t.id: i for i, t in enumerate(tree)}
    assert all(place[t.parent] < place[t.id] for t in tree if t.parent)
    # one heading: its document and its subsections; the category: its top-level sections
    one = mem.documents.topic(top.id)
    assert one.topic == top and [m.id for m in one.members] == [guide]
    assert sorted(one.children) == sorted([by_label["Accounts"].id, by_label["Expenses"].id])
    assert top.id in mem.documents.topic(deepest.id).children
    # notes without headings add nothing below their categories
    assert {t.document for t in tree if t.kind == "heading"} == {guide}
    # the audit query shows the same tree
    rows = mem.audit.run("topic_tree", {"owner": who}).rows
    assert {(r["kind"], r["id"], r["parent"], r["label"], r["level"]) for r in rows} == {
        (t.kind, t.id, t.parent, t.label, t.level) for t in tree}


def test_headings_keep_their_ids_across_a_rebuild_and_follow_versions_and_forgetting(
        memory: Memory, tenant: str) -> None:
    mem, who = memory.for_tenant(tenant), _owner()
    guide = _notes(memory, tenant, who)
    mem.documents.build_topics(who)
    before = {t.id: t for t in mem.documents.topics(who)}
    again = mem.documents.build_topics(who)
    assert again["kept"] == again["topics"]
    after = {t.id: t for t in mem.documents.topics(who)}
    assert after == before  # categories and headings alike
    # a new version: its own headings replace the old version's at the next build
    second = mem.documents.ingest(DocumentIn(
        owner=who, key="guide.md", media_type="text/markdown",
        content=GUIDE.replace("## Expenses", "## Travel and expenses"))).id
    mem.documents.build_topics(who)
    tree = mem.documents.topics(who)
    assert _headings(tree, guide) == {}
    assert "Travel and expenses" in {h.label for h in _headings(tree, second).values()}
    # forgetting the document takes its headings out of the tree
    mem.documents.forget(second)
    assert not [t for t in mem.documents.topics(who) if t.kind == "heading"]


def test_the_tree_over_http_and_a_heading_of_another_owner_is_a_404(
        limited: dict[str, Any], memory: Memory, tenant: str) -> None:
    c, alice = limited["client"], limited["alice"]
    bob = _owner()
    guide = _notes(memory, tenant, bob)
    memory.for_tenant(tenant).documents.build_topics(bob)
    r = c.get("/v1/topics", params={"owner": bob}, headers=auth("full"))
    assert r.status_code == 200, r.text
    heads = [t for t in r.json() if t["kind"] == "heading"]
    assert len(heads) == 4 and all(t["document"] == guide for t in heads)
    assert all("search_text" not in t and "scope" not in t for t in r.json())
    one = c.get(f"/v1/topics/{heads[0]['id']}", headers=auth("full"))
    assert one.status_code == 200 and one.json()["topic"] == heads[0]
    theirs = c.get(f"/v1/topics/{heads[0]['id']}", headers=auth("alice"))
    never = c.get(f"/v1/topics/{guide}:s999", headers=auth("full"))
    assert theirs.status_code == never.status_code == 404
    assert c.get("/v1/topics", params={"owner": alice}, headers=auth("alice")).json() == []


def test_topic_labels_are_matched_by_the_label_index(memory: Memory, tenant: str) -> None:
    mem, who = memory.for_tenant(tenant), _owner()
    _notes(memory, tenant, who)
    mem.documents.build_topics(who)
    store = DocumentStore(memory.store, tenant)
    top = [t for t in mem.documents.topics(who) if t.kind == "category" and t.level == 1]
    word = {t.id: t.label.split(",")[0].strip() for t in top}
    for id_, w in word.items():
        found = store.topic_label_match(who, w, 1)
        assert found and found[0]["id"] == id_ and found[0]["documents"], (w, found)
    assert store.topic_label_match(_owner(), next(iter(word.values())), 3) == []
    assert store.topic_label_match(who, "zzzqqq", 3) == []


def test_topics_written_before_the_label_index_are_migrated(memory: Memory, tenant: str,
                                                            cypher: Any) -> None:
    mem, who = memory.for_tenant(tenant), _owner()
    _notes(memory, tenant, who)
    mem.documents.build_topics(who)
    store = DocumentStore(memory.store, tenant)
    label = next(t.label for t in mem.documents.topics(who) if t.kind == "category")
    cypher("MATCH (t:Topic {tenant: $tenant, owner: $owner}) "
           "REMOVE t.scope, t.search_text, t.keyphrases, t.kind", tenant=tenant, owner=who)
    cypher("MATCH (g:GraphMeta {key: 'topic_index'}) DELETE g")
    assert store.topic_label_match(who, label, 1) == []
    assert topic_index.migrate(memory.store) >= 1
    assert store.topic_label_match(who, label, 1)[0]["documents"]
    assert topic_index.migrate(memory.store) == 0  # marked done


def _built_notes(memory: Memory, tenant: str) -> tuple[TenantMemory, str, DocumentStore,
                                                        list[Topic]]:
    """A new owner's notes stored and their tree built: the owner's memory, name, document
    store and categories."""
    mem, who = memory.for_tenant(tenant), _owner()
    _notes(memory, tenant, who)
    mem.documents.build_topics(who)
    cats = [t for t in mem.documents.topics(who) if t.kind == "category"]
    return mem, who, DocumentStore(memory.store, tenant), cats


def _client(srv: ScriptedOpenAIServer) -> LLMClient:
    return LLMClient(LLMSettings(base_url=srv.base_url, model="scripted-model", max_retries=1,
                                 backoff_base_s=0.0))


def test_an_llm_labels_and_summarises_topics_and_a_rebuild_keeps_them(
        memory: Memory, tenant: str) -> None:
    mem, who, store, cats = _built_notes(memory, tenant)
    with ScriptedOpenAIServer() as srv:
        srv.default(json={"label": "A group of notes", "summary": "Notes on one subject."})
        done = labels.label_topics(_client(srv), store, who)
        assert done == {"owner": who, "labelled": len(cats), "model": "scripted-model"}
        asked = srv.requests[0]["messages"][1]["content"]
        assert "Keyphrases:" in asked and "Documents (" in asked
    tree = {t.id: t for t in mem.documents.topics(who) if t.kind == "category"}
    assert all(t.label == "A group of notes" and t.summary == "Notes on one subject."
               and t.label_model == "scripted-model" and t.keyphrases == c.label
               for c in cats for t in [tree[c.id]])
    assert store.topic_label_match(who, "subject", 5)  # the summary is in the label index
    again = mem.documents.build_topics(who)  # the same members: the same ids, labels kept
    assert again["kept"] == again["topics"]
    assert {t.id: (t.label, t.summary) for t in mem.documents.topics(who)
            if t.kind == "category"} == {i: (t.label, t.summary) for i, t in tree.items()}
    assert store.topics_to_label(who, 10, 2, 1) == []  # nothing left to label


def test_a_failed_llm_call_writes_nothing_and_the_rest_is_done_on_retry(
        memory: Memory, tenant: str) -> None:
    mem, who, store, cats = _built_notes(memory, tenant)
    with ScriptedOpenAIServer() as srv:
        srv.reply_json({"label": "First group", "summary": "The first group's notes."})
        srv.default(status=500, text="boom")
        with pytest.raises(labels.LabelsFailed, match=f"{len(cats) - 1} of {len(cats)} topics"):
            labels.label_topics(_client(srv), store, who)
        left = {t.id: t for t in mem.documents.topics(who) if t.kind == "category"}
        bare = [t for t in left.values() if t.label_model is None]
        assert len(bare) == len(cats) - 1
        assert all(t.summary is None and t.label == t.keyphrases for t in bare)  # no fake
        srv.default(json={"label": "Later group", "summary": "Labelled on retry."})
        assert labels.label_topics(_client(srv), store, who)["labelled"] == len(cats) - 1
    assert all(t.label_model == "scripted-model" for t in mem.documents.topics(who)
               if t.kind == "category")


def test_a_build_enqueues_the_label_job_only_when_asked(memory: Memory, tenant: str,
                                                        cypher: Any) -> None:
    who = _owner()
    store = DocumentStore(memory.store, tenant)
    now = datetime.now(UTC)
    row = {"id": f"tp-{uuid.uuid4().hex[:8]}", "level": 1, "parent": None, "label": "x",
           "members": [], "documents": 0,
           "centroid": [1.0] + [0.0] * (memory.embedder.dimensions - 1),
           "first_at": now, "last_at": now}
    store.write_topics(who, [row], now)
    jobs = "MATCH (j:Job {tenant: $tenant, kind: $kind}) RETURN count(j) AS n"
    assert cypher(jobs, tenant=tenant, kind=LABEL_TOPICS) == [{"n": 0}]
    store.write_topics(who, [row], now, label_job=True)
    assert cypher(jobs, tenant=tenant, kind=LABEL_TOPICS) == [{"n": 1}]


def test_a_placed_version_brings_its_headings_under_its_category(memory: Memory,
                                                                 tenant: str) -> None:
    """Placement (the place_document job, no rebuild) hangs a new version's headings under the
    deepest topic it joins, and takes its key's earlier version's headings out."""
    mem, who = memory.for_tenant(tenant), _owner()
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            mem.documents.ingest(DocumentIn(owner=who, key=f"{group}/{i}", content=text))
    mem.documents.build_topics(who)
    stores = memory.stores(tenant)
    first = mem.documents.ingest(DocumentIn(owner=who, key="guide.md", content=GUIDE,
                                            media_type="text/markdown")).id
    placed = memory.documents.place(stores, first)
    assert placed["placed"], placed
    deepest = placed["placed"][-1]
    tree = mem.documents.topics(who)
    heads = _headings(tree, first)
    assert len(heads) == 4
    assert {h.parent for h in heads.values() if h.label == "Onboarding guide"} == {deepest}
    second = mem.documents.ingest(DocumentIn(
        owner=who, key="guide.md", media_type="text/markdown",
        content=GUIDE.replace("Passwords rotate", "Passwords change"))).id
    assert memory.documents.place(stores, second)["placed"]
    tree = mem.documents.topics(who)
    assert _headings(tree, first) == {} and len(_headings(tree, second)) == 4
