"""An owner's topic tree over HTTP, on the real Neo4j: GET /v1/topics?owner= (every topic with
its level, parent, label, number of documents and times) and GET /v1/topics/{id} (its member
documents and subtopics); a key limited to other owners gets 403 for the tree and, for a topic
id, the very 404 an unknown id gets; another tenant sees nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.access import Access
from graphmem.config import Settings, hash_api_key
from graphmem.documents.models import DocumentIn
from graphmem.service import Memory
from tests.integration.conftest import auth

from .test_documents import TOPIC_NOTES


@pytest.fixture
def keyed(settings: Settings, memory: Memory, tenant: str) -> Iterator[dict[str, Any]]:
    from graphmem.api.app import create_app

    alice, bob = f"tp-{uuid.uuid4().hex[:8]}", f"tp-{uuid.uuid4().hex[:8]}"
    grants: dict[str, str | Access] = {
        "full": tenant, "alice": Access(tenant=tenant, owners=frozenset({alice}))}
    s = settings.model_copy(update={"api_keys": {hash_api_key(k): g for k, g in grants.items()}})
    tm = memory.for_tenant(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            tm.documents.ingest(DocumentIn(owner=bob, key=f"{group}/{i}", content=text))
    tm.documents.build_topics(bob)
    with TestClient(create_app(s, memory)) as client:
        yield {"client": client, "alice": alice, "bob": bob}


def test_an_owners_tree_and_one_topic_with_its_documents(keyed: dict[str, Any]) -> None:
    c, bob = keyed["client"], keyed["bob"]
    r = c.get("/v1/topics", params={"owner": bob}, headers=auth("full"))
    assert r.status_code == 200, r.text
    tree = r.json()
    top = [t for t in tree if t["level"] == 1]
    assert len(top) == 3 and all(t["documents"] == 3 and t["label"] for t in top)
    assert all(t["owner"] == bob and t["parent"] is None for t in top)
    assert all(t["first_at"] <= t["last_at"] for t in tree)
    assert {t["parent"] for t in tree if t["level"] == 2} <= {t["id"] for t in top}
    assert "embedding" not in tree[0] and "centroid" not in tree[0]
    groups = []
    for t in top:
        got = c.get(f"/v1/topics/{t['id']}", headers=auth("full"))
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["topic"] == t
        assert len(body["members"]) == 3 and all(m["id"].startswith("d-")
                                                 for m in body["members"])
        groups.append(sorted({m["key"].split("/")[0] for m in body["members"]}))
    assert sorted(groups) == [["baking"], ["glaciers"], ["rockets"]]
    empty = c.get("/v1/topics", params={"owner": f"none-{uuid.uuid4().hex[:6]}"},
                  headers=auth("full"))
    assert empty.status_code == 200 and empty.json() == []
    assert c.get("/v1/topics", headers=auth("full")).status_code == 422  # owner is required


def test_another_owners_topic_is_a_404_like_an_unknown_id(keyed: dict[str, Any]) -> None:
    c, alice, bob = keyed["client"], keyed["alice"], keyed["bob"]
    theirs = c.get("/v1/topics", params={"owner": bob}, headers=auth("full")).json()[0]["id"]
    assert c.get("/v1/topics", params={"owner": bob}, headers=auth("alice")).status_code == 403
    assert c.get("/v1/topics", params={"owner": alice}, headers=auth("alice")).json() == []
    other = c.get(f"/v1/topics/{theirs}", headers=auth("alice"))
    never = c.get("/v1/topics/tp-never-stored", headers=auth("alice"))
    assert other.status_code == never.status_code == 404
    assert other.headers["content-type"] == "application/problem+json"
    assert other.json() == {**never.json(),
                            "detail": never.json()["detail"].replace("tp-never-stored", theirs)}
    assert c.get("/v1/topics/tp-never-stored", headers=auth("full")).status_code == 404


def test_another_tenant_sees_no_topic(keyed: dict[str, Any], api: TestClient) -> None:
    c, bob = keyed["client"], keyed["bob"]
    theirs = c.get("/v1/topics", params={"owner": bob}, headers=auth("full")).json()[0]["id"]
    assert api.get("/v1/topics", params={"owner": bob}, headers=auth("key-b")).json() == []
    assert api.get(f"/v1/topics/{theirs}", headers=auth("key-b")).status_code == 404
