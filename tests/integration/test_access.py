"""API keys and tenant isolation, through every endpoint."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from graphmem.config import Settings
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
