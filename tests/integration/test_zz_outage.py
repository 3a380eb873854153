"""Neo4j going away: 503 with a clear message, then recovery without a restart of the service.

Runs last (file name): it stops and restarts the session's Neo4j.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.servers import neo4j_server
from graphmem.service import Memory
from tests.integration.helpers import msg, owner


def test_unreachable_neo4j_gives_503_then_recovers(settings: Settings, memory: Memory) -> None:
    s = settings.model_copy(update={"api_keys": {hash_api_key("k"): "outage"}})
    headers = {"Authorization": "Bearer k"}
    who = owner()
    neo4j_server.stop(settings)
    try:
        # an app started while Neo4j is down still starts, and answers 503
        with TestClient(create_app(s)) as fresh, TestClient(create_app(s, memory)) as warm:
            for client in (fresh, warm):
                r = client.post("/v1/messages", json={"messages": [msg(0, who)]}, headers=headers)
                assert r.status_code == 503, r.text
                assert r.headers["content-type"].startswith("application/problem+json")
                assert "Neo4j" in r.json()["detail"]
                assert r.headers["retry-after"]
                assert client.get("/healthz").status_code == 503
            neo4j_server.start(settings)
            for client in (fresh, warm):
                assert client.get("/healthz").status_code == 200
                r = client.post("/v1/messages", json={"messages": [msg(1, who)]}, headers=headers)
                assert r.status_code == 201, r.text
    finally:
        neo4j_server.start(settings)
