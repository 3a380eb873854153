"""Documents against the real Neo4j: every format stored over HTTP (JSON and upload) with its
sections and exact offsets; chunk search with citations; versions (superseding, as_of, unchanged
content a no-op, embeddings reused); bad files refused with nothing written; a large document
embedded by the background job; owners and tenants isolated."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.access import Access
from graphmem.config import Settings
from graphmem.documents.models import ChunkSearch, DocumentIn
from graphmem.documents.service import Documents
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.test_mcp import mcp_url

__all__ = ["mcp_url"]

FIXTURES = Path(__file__).parents[1] / "fixtures" / "documents"
FILES = {"note.txt": "text/plain", "guide.md": "text/markdown", "page.html": "text/html",
         "report.pdf": "application/pdf"}


def _owner() -> str:
    return f"doc-{uuid.uuid4().hex[:10]}"


def _json(owner: str, name: str, key: str | None = None, **extra: Any) -> dict[str, Any]:
    raw = (FIXTURES / name).read_bytes()
    content = base64.b64encode(raw).decode() if name.endswith(".pdf") else raw.decode()
    return {"owner": owner, "key": key or name, "media_type": FILES[name], "content": content,
            **extra}


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_format_is_stored_with_sections_and_exact_offsets(api: TestClient,
                                                                name: str) -> None:
    who = _owner()
    r = api.post("/v1/documents", json=_json(who, name), headers=auth())
    assert r.status_code == 201, r.text
    wrote = r.json()
    assert wrote["action"] == "created" and wrote["state"] == "ready" and wrote["chunks"] >= 1
    got = api.get(f"/v1/documents/{wrote['id']}", params={"with_text": "true"},
                  headers=auth()).json()
    text = got["text"]
    if name in ("note.txt", "guide.md"):  # offsets point into the source itself
        assert text == (FIXTURES / name).read_text()
    titles = [s["path"][-1] for s in got["sections"]]
    expected = {"note.txt": ["Weather", "Supplies"],
                "guide.md": ["Onboarding guide", "Accounts", "Passwords", "Expenses"],
                "page.html": ["Tidal energy primer", "Barrages", "Stream generators"],
                "report.pdf": []}[name]
    assert titles == expected
    if name == "guide.md":
        assert got["sections"][2]["path"] == ["Onboarding guide", "Accounts", "Passwords"]
    hits = api.post("/v1/documents/search", json={"owner": who, "query": "password rotation "
                    "tides oil glacier", "k": 20}, headers=auth()).json()["chunks"]
    assert hits
    for h in hits:  # every citation is the exact text at its offsets
        assert text[h["start"]:h["end"]] == h["text"]
        assert h["document_id"] == wrote["id"] and h["version"] == 1
    if name == "page.html":
        assert "tracking" not in text and "Copyright" not in text
        assert got["document"]["authors"] == ["Ada Marsh"]
        assert got["document"]["doi"] == "10.1234/tidal.2020.7"


def test_an_upload_is_stored_as_its_json_twin(api: TestClient) -> None:
    who = _owner()
    with (FIXTURES / "report.pdf").open("rb") as f:
        r = api.post("/v1/documents", data={"owner": who, "key": "report",
                                            "metadata": '{"team": "glaciers"}'},
                     files={"file": ("report.pdf", f, "application/pdf")}, headers=auth())
    assert r.status_code == 201, r.text
    again = api.post("/v1/documents", json=_json(who, "report.pdf", key="report",
                                                 metadata={"team": "glaciers"}), headers=auth())
    assert again.json()["action"] == "unchanged" and again.json()["id"] == r.json()["id"]
    doc = api.get(f"/v1/documents/{r.json()['id']}", headers=auth()).json()["document"]
    assert doc["title"] == "Glacier retreat report" and doc["metadata"] == {"team": "glaciers"}
    hits = api.post("/v1/documents/search", json={
        "owner": who, "query": "when will small glaciers disappear", "k": 1,
        "metadata": {"team": "glaciers"}}, headers=auth()).json()["chunks"]
    assert "2060" in hits[0]["text"]
    none = api.post("/v1/documents/search", json={
        "owner": who, "query": "glaciers", "metadata": {"team": "other"}}, headers=auth())
    assert none.json()["chunks"] == []


def test_versions_supersede_keep_history_and_reuse_embeddings(api: TestClient,
                                                              cypher: Any) -> None:
    who = _owner()
    v1 = "# Plan\n\nWe meet on Mondays at nine.\n\n## Food\n\nLunch is pizza on Fridays.\n"
    v2 = "# Plan\n\nWe meet on Tuesdays at ten.\n\n## Food\n\nLunch is pizza on Fridays.\n"
    body = {"owner": who, "key": "plan", "media_type": "text/markdown",
            "valid_from": "2026-01-01T00:00:00Z"}
    first = api.post("/v1/documents", json={**body, "content": v1}, headers=auth()).json()
    same = api.post("/v1/documents", json={**body, "content": v1}, headers=auth()).json()
    assert same["action"] == "unchanged" and same["id"] == first["id"]
    second = api.post("/v1/documents", json={**body, "content": v2, "reason": "new day",
                                             "valid_from": "2026-02-01T00:00:00Z"},
                      headers=auth()).json()
    assert second["action"] == "versioned" and second["version"] == 2
    assert second["supersedes"] == first["id"]
    assert second["reused"] == 1 and second["embedded_now"] == 1  # the Food chunk kept its own
    rel = cypher("MATCH (n:Document {id: $a})-[s:SUPERSEDES]->(o:Document {id: $b}) "
                 "RETURN s.reason AS reason", a=second["id"], b=first["id"])
    assert rel == [{"reason": "new day"}]
    now = api.post("/v1/documents/search", json={"owner": who, "query": "when do we meet",
                                                  "k": 1}, headers=auth()).json()["chunks"]
    assert "Tuesdays" in now[0]["text"] and now[0]["version"] == 2
    then = api.post("/v1/documents/search", json={
        "owner": who, "query": "when do we meet", "k": 1, "as_of": "2026-01-15T00:00:00Z"},
        headers=auth()).json()["chunks"]
    assert "Mondays" in then[0]["text"] and then[0]["version"] == 1
    old = api.get("/v1/documents", params={"owner": who, "key": "plan",
                                           "as_of": "2026-01-15T00:00:00Z"}, headers=auth())
    assert [d["id"] for d in old.json()] == [first["id"]]
    detail = api.get(f"/v1/documents/{first['id']}", headers=auth()).json()
    assert [v["version"] for v in detail["versions"]] == [2, 1]
    assert detail["document"]["valid_to"].startswith("2026-02-01")
    listed = api.get("/v1/documents", params={"owner": who}, headers=auth()).json()
    assert [d["id"] for d in listed] == [second["id"]]
    earlier = api.post("/v1/documents", json={**body, "content": "x y z",
                                              "valid_from": "2025-01-01T00:00:00Z"},
                       headers=auth())
    assert earlier.status_code == 422 and earlier.json()["field"] == "valid_from"


@pytest.mark.parametrize(("name", "media", "status", "field"), [
    ("scanned.pdf", "application/pdf", 422, "content"),
    ("broken.pdf", "application/pdf", 422, "content"),
    ("note.txt", "application/msword", 415, "media_type"),
])
def test_bad_files_are_refused_and_nothing_is_written(api: TestClient, cypher: Any, name: str,
                                                      media: str, status: int,
                                                      field: str) -> None:
    who = _owner()
    raw = (FIXTURES / name).read_bytes()
    content = base64.b64encode(raw).decode() if name.endswith(".pdf") else raw.decode()
    r = api.post("/v1/documents", json={"owner": who, "key": "k", "media_type": media,
                                        "content": content}, headers=auth())
    assert r.status_code == status, r.text
    assert r.json()["field"] == field
    if name == "scanned.pdf":
        assert "no text layer" in r.json()["detail"]
    assert cypher("MATCH (n {owner: $o}) RETURN count(n) AS n", o=who) == [{"n": 0}]


def test_limits_answer_413_naming_the_field(settings: Settings, memory: Memory,
                                            tenant: str) -> None:
    small = settings.model_copy(update={"max_document_chars": 100, "max_document_chunks": 2})
    docs = Documents(small, memory.embedder)
    from graphmem.errors import TooLarge
    with pytest.raises(TooLarge) as chars:
        docs.ingest(memory.stores(tenant), DocumentIn(owner="o", key="k", content="word " * 50))
    assert chars.value.field == "content" and chars.value.limit == 100
    many = Documents(small.model_copy(update={"document_chunk_tokens": 16,
                                              "max_document_chars": 10_000}),
                     memory.embedder)
    with pytest.raises(TooLarge) as chunks:
        many.ingest(memory.stores(tenant), DocumentIn(owner="o", key="k", content=" ".join(
            ["Many words here make many small chunks of text."] * 8)))
    assert chunks.value.field == "content" and chunks.value.limit == 2


def test_a_large_document_is_embedded_by_the_background_job(settings: Settings,
                                                             memory: Memory,
                                                             tenant: str) -> None:
    later = Documents(settings.model_copy(update={"document_inline_chunks": 0}),
                      memory.embedder)
    text = "\n".join(f"Paragraph {i} tells of the harbour crane number {i} and its load of "
                     f"timber." for i in range(6))
    wrote = later.ingest(memory.stores(tenant), DocumentIn(owner="o", key="big", content=text))
    assert wrote.state == "embedding" and wrote.job is not None
    by_words = later.search(memory.stores(tenant), ChunkSearch(owner="o", query="crane timber",
                                                method="fulltext"))
    assert by_words.chunks  # searchable by its words at once
    assert later.search(memory.stores(tenant), ChunkSearch(owner="o", query="crane",
                                            method="vector")).chunks == []
    job = memory.jobs.get(tenant, wrote.job)
    result = later.embed_pending(memory.stores(tenant), wrote.id)
    assert job.kind == "embed_document" and result["state"] == "ready"
    assert later.get(memory.stores(tenant), wrote.id).document.state == "ready"
    assert later.search(memory.stores(tenant),
                        ChunkSearch(owner="o", query="crane", method="vector")).chunks


def test_a_key_limited_to_some_owners_learns_nothing_of_others(limited: dict[str, Any]) -> None:
    c, alice, bob = limited["client"], limited["alice"], limited["bob"]
    bobs = c.post("/v1/documents", json=_json(bob, "guide.md"), headers=auth("full")).json()
    mine = c.post("/v1/documents", json=_json(alice, "guide.md"), headers=auth("alice"))
    assert mine.status_code == 201 and mine.json()["id"] != bobs["id"]  # keys are per owner
    assert mine.json()["action"] == "created"
    refused = c.post("/v1/documents", json=_json(bob, "note.txt"), headers=auth("alice"))
    assert refused.status_code == 403
    unknown = c.get(f"/v1/documents/{bobs['id']}", headers=auth("alice"))
    never = c.get("/v1/documents/d-never-stored-v1", headers=auth("alice"))
    assert unknown.status_code == never.status_code == 404
    assert unknown.json()["detail"].replace(bobs["id"], "X") == \
        never.json()["detail"].replace("d-never-stored-v1", "X")
    assert c.get("/v1/documents", params={"owner": bob}, headers=auth("alice")).status_code == 403
    assert c.post("/v1/documents/search", json={"owner": bob, "query": "passwords"},
                  headers=auth("alice")).status_code == 403
    hits = c.post("/v1/documents/search", json={"owner": alice, "query": "passwords"},
                  headers=auth("alice")).json()["chunks"]
    assert hits and all(h["document_id"] == mine.json()["id"] for h in hits)


def test_tenants_do_not_see_each_others_documents(api: TestClient) -> None:
    who = _owner()
    wrote = api.post("/v1/documents", json=_json(who, "note.txt"), headers=auth("key-a")).json()
    assert api.get(f"/v1/documents/{wrote['id']}", headers=auth("key-b")).status_code == 404
    assert api.post("/v1/documents/search", json={"owner": who, "query": "keepers"},
                    headers=auth("key-b")).json()["chunks"] == []


def test_forgetting_a_document_removes_every_version_and_is_audited(api: TestClient,
                                                                    cypher: Any) -> None:
    who = _owner()
    body = {"owner": who, "key": "memo", "media_type": "text/plain"}
    first = api.post("/v1/documents", json={**body, "content": "The vault code is 1234."},
                     headers=auth()).json()
    second = api.post("/v1/documents", json={**body, "content": "The vault code is 9876."},
                      headers=auth()).json()
    gone = api.delete(f"/v1/documents/{first['id']}", headers=auth())
    assert gone.status_code == 200, gone.text
    assert gone.json()["removed"] == {"documents": 2, "sections": 0, "chunks": 2}
    assert cypher("MATCH (n {tenant: 'tenant-a', owner: $o}) WHERE NOT n:Job "
                  "RETURN count(n) AS n", o=who) == [{"n": 0}]
    assert api.get(f"/v1/documents/{second['id']}", headers=auth()).status_code == 404
    again = api.delete(f"/v1/documents/{first['id']}", headers=auth()).json()
    assert again["already_forgotten"] is True
    audit = cypher("MATCH (d:Deletion {tenant: 'tenant-a', kind: 'document'}) "
                   "WHERE d.documents = 2 RETURN count(d) AS n")
    assert audit[0]["n"] >= 1
    assert api.delete("/v1/documents/d-never-v1", headers=auth()).status_code == 404


def test_forgetting_an_owner_takes_its_documents(memory: Memory, tenant: str,
                                                 cypher: Any) -> None:
    mem = memory.for_tenant(tenant)
    mem.documents.ingest(DocumentIn(owner="gone", key="k", content="Some text to forget."))
    report = mem.messages.forget_owner("gone")
    assert report.documents >= 3  # the version, its chunk, the key's lock
    assert cypher("MATCH (n {tenant: $t}) WHERE NOT n:Deletion RETURN count(n) AS n",
                  t=tenant) == [{"n": 0}]


TOPIC_NOTES = {
    "glaciers": ["Glaciers retreat as summers warm and the ice melts.",
                 "Meltwater from the glacier ice feeds the valley river in spring.",
                 "Snow falling on the glacier turns to ice over many winters."],
    "baking": ["Knead the bread dough with flour and yeast, then let it rise.",
               "Bake the loaf in a hot oven until the crust is brown.",
               "Sourdough bread needs a starter of flour and water."],
    "rockets": ["The rocket launch put the satellite into orbit.",
                "Rocket engines burn fuel and oxidiser to climb to orbit.",
                "After launch the rocket's upper stage reached orbit."],
}


def test_topics_group_documents_and_keep_ids_across_a_rebuild(memory: Memory,
                                                              tenant: str) -> None:
    mem = memory.for_tenant(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            mem.documents.ingest(DocumentIn(owner="o", key=f"{group}/{i}", content=text))
    first = mem.documents.build_topics("o")
    assert first["documents"] == 9
    top = [t for t in mem.documents.topics("o") if t.level == 1]
    groups = {t.id: {m.key.split("/")[0] for m in mem.documents.topic(t.id).members}
              for t in top}
    assert sorted(sorted(g) for g in groups.values()) == [["baking"], ["glaciers"], ["rockets"]]
    assert all(t.documents == 3 and t.label for t in top)
    mem.documents.ingest(DocumentIn(owner="o", key="rockets/3",
                                    content="The rocket reached orbit after its launch."))
    second = mem.documents.build_topics("o")
    assert second["kept"] >= 2
    after = {t.id for t in mem.documents.topics("o") if t.level == 1}
    unchanged = {i for i, g in groups.items() if g != {"rockets"}}
    assert unchanged <= after  # the categories that did not change kept their ids
    again = mem.documents.build_topics("o")
    assert again["kept"] == again["topics"]  # nothing changed: every id kept


def test_topics_are_the_owners_own(memory: Memory, tenant: str) -> None:
    from graphmem.errors import NotFound

    full = memory.for_tenant(tenant)
    for i, text in enumerate(TOPIC_NOTES["baking"]):
        full.documents.ingest(DocumentIn(owner="bob", key=f"b{i}", content=text))
    full.documents.build_topics("bob")
    bobs = full.documents.topics("bob")
    assert bobs
    alice = memory.for_tenant(tenant, Access(tenant=tenant, owners=frozenset({"alice"})))
    with pytest.raises(NotFound) as err:
        alice.documents.topic(bobs[0].id)
    assert str(err.value) == f"no topic {bobs[0].id!r}"
    from graphmem.errors import Forbidden
    with pytest.raises(Forbidden):
        alice.documents.topics("bob")
    assert memory.for_tenant("t-other-" + tenant[-6:]).documents.topics("bob") == []


def test_audit_queries_show_versions_and_the_topic_tree(memory: Memory, tenant: str) -> None:
    mem = memory.for_tenant(tenant)
    first = mem.documents.ingest(DocumentIn(owner="o", key="k", content="One text."))
    mem.documents.ingest(DocumentIn(owner="o", key="k", content="Two text.", reason="edit"))
    rows = mem.audit.run("document_versions", {"id": first.id}).rows
    assert [r["version"] for r in rows] == [1, 2] and rows[0]["reason"] == "edit"
    mem.documents.build_topics("o")
    tree = mem.audit.run("topic_tree", {"owner": "o"}).rows
    assert [r["documents"] for r in tree] == [1]


def test_the_mcp_tool_searches_documents_with_citations(mcp_url: str, memory: Memory) -> None:
    from mcp import Client

    from tests.integration.test_mcp import data, over_http

    who = _owner()
    wrote = memory.for_tenant("tenant-a").documents.ingest(DocumentIn(
        owner=who, key="guide.md", media_type="text/markdown",
        content=(FIXTURES / "guide.md").read_text()))

    async def work(client: Client) -> Any:
        return data(await client.call_tool("search_documents", {
            "query": "how often do passwords rotate", "owner": who, "k": 1}))

    found = over_http(mcp_url, "key-a", work)
    hit = found["chunks"][0]
    assert hit["document_id"] == wrote.id and "ninety days" in hit["text"]
    assert hit["section"] == ["Onboarding guide", "Accounts", "Passwords"]
