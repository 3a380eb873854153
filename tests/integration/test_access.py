"""API keys and tenant isolation, through every endpoint; keys limited to some owners or to
reading (`graphmem.access`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.access import Access
from graphmem.config import Settings, hash_api_key, key_id
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner


@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic a2V5LWE="},
    {"Authorization": "Bearer "},
])
def test_missing_or_wrong_key_is_401(api: TestClient, headers: dict[str, str]) -> None:
    for method, path in [("post", "/v1/messages"), ("get", "/v1/messages/x"),
                         ("get", "/v1/sessions/s/messages"), ("delete", "/v1/owners/x"),
                         ("delete", "/v1/sessions/s?owner=x"),
                         ("post", "/v1/search")]:
        r = api.request(method, path, headers=headers, json={})
        assert r.status_code == 401, (method, path, r.text)
        assert r.headers["www-authenticate"] == "Bearer"
        assert r.json()["title"] == "unauthorized"


def test_tenants_are_isolated(api: TestClient) -> None:
    who = owner()
    body = {"messages": [msg(i, who, text="the secret launch code is tulip") for i in range(2)]}
    assert api.post("/v1/messages", json=body, headers=auth("key-a")).status_code == 201
    b = auth("key-b")
    assert api.get(f"/v1/messages/{who}-s1-0", headers=b).status_code == 404
    assert api.get("/v1/sessions/s1/messages", params={"owner": who}, headers=b).json() == []
    hits = api.post("/v1/search", json={"query": "secret launch code tulip", "owner": who},
                    headers=b).json()["hits"]
    assert hits == []
    assert api.delete(f"/v1/owners/{who}", headers=b).json()["messages"] == 0
    one = {"owner": who}
    assert api.delete("/v1/sessions/s1", params=one, headers=b).status_code == 404
    # tenant b may use the same ids without touching tenant a's messages
    assert api.post("/v1/messages", json=body, headers=b).json()["created"] == 2
    gone = api.delete("/v1/sessions/s1", params=one, headers=b).json()
    assert gone["removed"]["messages"] == 2
    assert api.get(f"/v1/messages/{who}-s1-0", headers=auth("key-a")).status_code == 200


def test_anonymous_only_when_enabled(settings: Settings, memory: Memory) -> None:
    from graphmem.api.app import create_app

    dev = settings.model_copy(update={"allow_anonymous": True, "anonymous_tenant": "dev-x"})
    with TestClient(create_app(dev, memory)) as client:
        r = client.get("/v1/sessions/none/messages")
        assert r.status_code == 200
    with pytest.raises(ValueError, match="loopback"):
        Settings(allow_anonymous=True, host="0.0.0.0")


@pytest.fixture
def keyed(settings: Settings, memory: Memory, tenant: str) -> Iterator[dict[str, Any]]:
    """The app with four keys of one fresh tenant, and two owners' memory stored with the full
    key: alice's and bob's messages, a fact each, a run each."""
    from graphmem.api.app import create_app

    alice, bob = owner(), owner()
    grants: dict[str, str | Access] = {
        "full": tenant,
        "alice": Access(tenant=tenant, owners=frozenset({alice})),
        "two": Access(tenant=tenant, owners=frozenset({alice, "carol"})),
        "read": Access(tenant=tenant, read_only=True),
    }
    s = settings.model_copy(update={"api_keys": {hash_api_key(k): g for k, g in grants.items()}})
    with TestClient(create_app(s, memory)) as client:
        full = auth("full")
        for who in (alice, bob):
            body = {"messages": [msg(i, who, text=f"{who} keeps the spare key under the mat")
                                 for i in range(2)]}
            assert client.post("/v1/messages", json=body, headers=full).status_code == 201
        facts = client.post("/v1/observations", headers=full, json={"observations": [
            {"owner": who, "subject": "spare key", "type": "place", "content": "under the mat"}
            for who in (alice, bob)]}).json()
        runs = client.post("/v1/traces", headers=full, json={"traces": [
            {"id": f"run-{who}", "owner": who, "started_at": "2026-03-01T10:00:00Z",
             "messages": [{"role": "user", "content": "Cancel my order"}]}
            for who in (alice, bob)]})
        assert runs.status_code == 201, runs.text
        yield {"client": client, "alice": alice, "bob": bob,
               "fact": {alice: facts[0]["id"], bob: facts[1]["id"]}}
        for who in (alice, bob):
            memory.for_tenant(tenant).messages.forget_owner(who)


def _refused(r: Any, field: str | None = None, says: str = "may not use owner") -> None:
    assert r.status_code == 403, r.text
    body = r.json()
    assert body["title"] == "forbidden" and says in body["detail"], body
    assert r.headers["content-type"].startswith("application/problem+json")
    assert body.get("field") == field


def test_a_key_for_one_owner_uses_that_owners_memory_only(keyed: dict[str, Any]) -> None:
    c, alice, bob = keyed["client"], keyed["alice"], keyed["bob"]
    k, full = auth("alice"), auth("full")
    mine, theirs = f"{alice}-s1-0", f"{bob}-s1-0"
    # reads: its owner's work; another owner's is refused, or unknown when named by id
    got = c.get(f"/v1/messages/{mine}", headers=k)
    assert got.status_code == 200 and got.json()["recorded_by"] == key_id("full")  # who sent it
    hidden = c.get(f"/v1/messages/{theirs}", headers=k)
    assert hidden.status_code == 404 and hidden.json()["detail"] == f"no message {theirs!r}"
    assert [o["owner"] for o in c.get("/v1/owners", headers=k).json()] == [alice]
    assert {o["owner"] for o in c.get("/v1/owners", headers=full).json()} == {alice, bob}
    assert len(c.get("/v1/sessions/s1/messages", headers=k).json()) == 2  # its one owner's
    _refused(c.get("/v1/sessions/s1/messages", params={"owner": bob}, headers=k), "owner")
    two = c.get("/v1/sessions/s1/messages", headers=auth("two"))
    assert two.status_code == 422 and two.json()["field"] == "owner"
    _refused(c.get("/v1/sessions", params={"owner": bob}, headers=k), "owner")
    query = {"query": "where is the spare key", "owner": bob}
    _refused(c.post("/v1/search", json=query, headers=k), "owner")
    _refused(c.post("/v1/context", json=query, headers=k), "owner")
    hits = c.post("/v1/search", json={**query, "owner": alice}, headers=k).json()["hits"]
    assert hits and {h["id"] for h in hits} <= {mine, f"{alice}-s1-1"}
    _refused(c.get("/v1/observations", params={"owner": bob}, headers=k), "owner")
    _refused(c.get(f"/v1/profile/{bob}", headers=k), "owner")
    _refused(c.get(f"/v1/owners/{bob}/export", headers=k), "owner")
    exported = c.get(f"/v1/owners/{alice}/export", headers=k).json()["records"]
    assert [r["properties"]["recorded_by"] for r in exported if r["kind"] == "trace"] == [
        key_id("full")]  # who sent the run
    fact = keyed["fact"]
    assert c.get(f"/v1/observations/{fact[alice]}/history", headers=k).status_code == 200
    assert c.get(f"/v1/observations/{fact[bob]}/history", headers=k).status_code == 404
    _refused(c.post("/v1/skills/search", json=query, headers=k), "owner")
    # writes: a batch naming another owner anywhere is refused whole
    batch = {"messages": [msg(5, alice), msg(5, bob)]}
    _refused(c.post("/v1/messages", json=batch, headers=k), "messages[1].owner")
    assert c.get(f"/v1/messages/{alice}-s1-5", headers=full).status_code == 404
    obs = {"owner": alice, "subject": "door", "type": "colour", "content": "green"}
    _refused(c.post("/v1/observations", json={"observations": [{**obs, "owner": bob}]},
                    headers=k), "observations[0].owner")
    cites = c.post("/v1/observations", json={"observations": [{**obs, "sources": [theirs]}]},
                   headers=k)  # another owner's message is not a source it knows
    assert cites.status_code == 422 and cites.json()["field"] == "observations[0].sources"
    written = c.post("/v1/observations", json={"observations": [{**obs, "sources": [mine]}]},
                     headers=k)
    assert written.status_code == 201
    history = c.get(f"/v1/observations/{written.json()[0]['id']}/history", headers=k).json()
    assert [f["recorded_by"] for f in history["facts"]] == [key_id("alice")]
    op = {"op": "ADD", "owner": bob, "key": "city", "value": "Oslo"}
    _refused(c.post("/v1/profile/ops", json={"ops": [op]}, headers=k), "ops[0].owner")
    run = {"owner": bob, "started_at": "2026-03-01T10:00:00Z",
           "messages": [{"role": "user", "content": "hi"}]}
    _refused(c.post("/v1/traces", json={"traces": [run]}, headers=k), "traces[0].owner")
    outcome = c.post(f"/v1/traces/run-{bob}/outcome", json={"outcome": "success"}, headers=k)
    assert outcome.status_code == 404
    # forgetting: another owner's things are refused or unknown, and stay
    _refused(c.delete(f"/v1/owners/{bob}", headers=k), "owner")
    _refused(c.delete("/v1/sessions/s1", params={"owner": bob}, headers=k), "owner")
    _refused(c.post("/v1/messages/forget", json={"owner": bob, "session_id": "s1"},
                    headers=k), "owner")
    for path in (f"/v1/messages/{theirs}", f"/v1/facts/{fact[bob]}", f"/v1/traces/run-{bob}"):
        assert c.delete(path, headers=k).status_code == 404, path
    assert c.get(f"/v1/messages/{theirs}", headers=full).status_code == 200
    assert c.get(f"/v1/observations/{fact[bob]}/history", headers=full).status_code == 200
    assert c.delete(f"/v1/traces/run-{bob}", headers=full).json()["already_forgotten"] is False
    assert c.delete(f"/v1/messages/{mine}", headers=k).status_code == 200
    # jobs: its owner's
    jobs = c.get("/v1/jobs", headers=k).json()
    assert jobs["jobs"] and {j["owner"] for j in jobs["jobs"]} == {alice}
    assert sum(jobs["counts"].values()) == len(jobs["jobs"])
    _refused(c.get("/v1/jobs", params={"owner": bob}, headers=k), "owner")
    assert c.get("/v1/jobs", headers=auth("two")).json()["title"] == "invalid input"
    theirs_job = c.get("/v1/jobs", params={"owner": bob}, headers=full).json()["jobs"][0]["id"]
    assert c.post(f"/v1/jobs/{theirs_job}/rerun", headers=k).status_code == 404
    # what spans the tenant needs a key for every owner
    for method, path in [("get", "/v1/usage"), ("get", "/v1/audit/integrity_overlaps")]:
        _refused(c.request(method, path, headers=k), None, "spans the tenant")
    assert c.get("/v1/audit", headers=k).status_code == 200  # the list of queries
    _refused(c.get("/v1/audit/true_at", params={"owner": bob, "t": "2026-03-01T10:00:00Z"},
                   headers=k), "owner")
    true_at = c.get("/v1/audit/true_at", params={"owner": alice, "t": "2030-01-01T00:00:00Z"},
                    headers=k)  # an owner's audit query, for its owner
    assert [r["content"] for r in true_at.json()["rows"]] == ["under the mat"]  # "green" rested
    # on the message forgotten above
    retry = c.post("/v1/episodes/retry-extraction", json={}, headers=k)
    _refused(retry, None, "spans the tenant")
    assert c.post("/v1/episodes/retry-extraction", json={"owner": alice},
                  headers=k).status_code == 202


def test_a_read_only_key_reads_and_never_writes(keyed: dict[str, Any]) -> None:
    c, alice, bob = keyed["client"], keyed["alice"], keyed["bob"]
    k, full = auth("read"), auth("full")
    query = {"query": "where is the spare key", "owner": bob}
    assert c.post("/v1/search", json=query, headers=k).json()["hits"]
    assert c.post("/v1/context", json=query, headers=k).status_code == 200
    for path in ("/v1/owners", "/v1/jobs", "/v1/usage", f"/v1/owners/{bob}/export",
                 f"/v1/messages/{bob}-s1-0", "/v1/audit/integrity_overlaps"):
        assert c.get(path, headers=k).status_code == 200, path
    obs = {"owner": alice, "subject": "door", "type": "colour", "content": "green"}
    writes = [
        ("post", "/v1/messages", {"messages": [msg(7, alice)]}),
        ("post", "/v1/observations", {"observations": [obs]}),
        ("post", "/v1/profile/ops", {"ops": [{"op": "ADD", "owner": alice, "key": "k",
                                              "value": "v"}]}),
        ("post", "/v1/traces", {"traces": [{"owner": alice, "started_at": "2026-03-01T10:00:00Z",
                                            "messages": [{"role": "user", "content": "hi"}]}]}),
        ("post", f"/v1/traces/run-{alice}/outcome", {"outcome": "success"}),
        ("post", "/v1/messages/forget", {"owner": alice, "session_id": "s1"}),
        ("post", "/v1/episodes/retry-extraction", {}),
        ("post", "/v1/jobs/x/rerun", None),
        ("delete", f"/v1/messages/{alice}-s1-0", None),
        ("delete", f"/v1/facts/{keyed['fact'][alice]}", None),
        ("delete", f"/v1/traces/run-{alice}", None),
        ("delete", "/v1/sessions/s1?owner=" + alice, None),
        ("delete", f"/v1/owners/{alice}", None),
    ]
    for method, path, body in writes:
        _refused(c.request(method, path, json=body, headers=k), None, "read-only")
    assert c.get(f"/v1/messages/{alice}-s1-0", headers=full).status_code == 200
    assert c.get(f"/v1/messages/{alice}-s1-7", headers=full).status_code == 404
    assert [o["traces"] for o in c.get("/v1/owners", headers=full).json()
            if o["owner"] == alice] == [1]


def test_keys_file_changes_without_a_restart(settings: Settings, memory: Memory,
                                             tmp_path: Path) -> None:
    from graphmem.api.app import create_app

    path = tmp_path / "keys.json"
    path.write_text(json.dumps({hash_api_key("first"): "tenant-a"}))
    s = settings.model_copy(update={"api_keys_file": path})
    with TestClient(create_app(s, memory)) as client:
        assert client.get("/v1/owners", headers=auth("first")).status_code == 200
        assert client.get("/v1/owners", headers=auth("second")).status_code == 401
        path.write_text(json.dumps({hash_api_key("second"): {"tenant": "tenant-a",
                                                             "read_only": True}}))
        time.sleep(1.1)
        assert client.get("/v1/owners", headers=auth("first")).status_code == 401  # revoked
        assert client.get("/v1/owners", headers=auth("second")).status_code == 200
        r = client.post("/v1/messages", json={"messages": [msg(0, owner())]},
                        headers=auth("second"))
        assert r.status_code == 403  # what the file grants
    path.write_text("{")
    with pytest.raises(ValueError, match=r"keys\.json: not JSON"):
        create_app(s, memory)


def test_each_key_is_paced_at_its_rate(settings: Settings, memory: Memory) -> None:
    from graphmem.api.app import create_app

    keys = {hash_api_key("slow"): "tenant-a", hash_api_key("slow-too"): "tenant-a",
            hash_api_key("free"): Access(tenant="tenant-a", rate_limit=0)}
    s = settings.model_copy(update={"api_keys": keys, "rate_limit": 1.0,
                                    "rate_limit_burst": 2})
    with TestClient(create_app(s, memory)) as client:
        assert [client.get("/v1/owners", headers=auth("slow")).status_code
                for _ in range(2)] == [200, 200]  # the burst
        r = client.post("/v1/messages", json={"messages": [msg(0, owner())]},
                        headers=auth("slow"))
        assert r.status_code == 429 and r.headers["retry-after"] == "1"
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["title"] == "too many requests"
        assert "1 requests per second (bursts of 2)" in r.json()["detail"]
        mcp = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers=auth("slow"))
        assert mcp.status_code == 429  # MCP counts against the same key
        assert client.get("/v1/owners", headers=auth("slow-too")).status_code == 200
        assert all(client.get("/v1/owners", headers=auth("free")).status_code == 200
                   for _ in range(10))
        assert client.get("/v1/owners", headers=auth("nobody")).status_code == 401
        assert client.get("/healthz").status_code == 200  # outside /v1: not counted
        time.sleep(1.05)
        assert client.get("/v1/owners", headers=auth("slow")).status_code == 200
