"""The real Neo4j for integration tests: started once per test run in a throwaway instance dir,
stopped and wiped at the end. If it cannot start, the run fails loudly (never skips)."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from fastapi.testclient import TestClient

from graphmem.access import Access
from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.servers import neo4j_server
from graphmem.service import Memory


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# Free ports by default, so two test runs on one machine never meet each other's Neo4j.
BOLT_PORT = int(os.environ.get("GRAPHMEM_TEST_BOLT_PORT") or _free_port())
HTTP_PORT = int(os.environ.get("GRAPHMEM_TEST_HTTP_PORT") or _free_port())
# The Neo4j under test: the default version, or another, e.g. GRAPHMEM_TEST_NEO4J_VERSION=2026.08.1.
_VERSION = os.environ.get("GRAPHMEM_TEST_NEO4J_VERSION")
VERSION: dict[str, Any] = {"neo4j_version": _VERSION} if _VERSION else {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def settings() -> Iterator[Settings]:
    instance = Path(tempfile.mkdtemp(prefix="graphmem-test-neo4j-"))
    s = Settings(
        neo4j_instance_dir=instance, neo4j_bolt_port=BOLT_PORT, neo4j_http_port=HTTP_PORT,
        neo4j_heap="1g", neo4j_pagecache="512m", neo4j_password=None,
        **VERSION,
    )
    try:
        neo4j_server.start(s)
    except neo4j_server.Neo4jServerError as exc:
        shutil.rmtree(instance, ignore_errors=True)
        pytest.fail(f"the test Neo4j could not start: {exc}", pytrace=False)
    yield s
    neo4j_server.wipe(s)


@pytest.fixture(scope="session")
def memory(settings: Settings) -> Iterator[Memory]:
    mem = Memory.open(settings)
    yield mem
    mem.close()


@pytest.fixture
def tenant() -> str:
    """A fresh tenant per test: tests never see each other's data."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def cypher(settings: Settings) -> Iterator[Any]:
    """Run ad-hoc Cypher for assertions (tests may look under the hood; product code may not)."""
    driver = neo4j.GraphDatabase.driver(
        settings.bolt_uri, auth=(settings.neo4j_user, settings.resolved_password() or "")
    )

    def run(query: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = driver.execute_query(query, params)
        return [r.data() for r in records]

    yield run
    driver.close()


KEYS = {"key-a": "tenant-a", "key-b": "tenant-b"}


@pytest.fixture
def api(settings: Settings, memory: Memory) -> Iterator[TestClient]:
    """The real app over the real store, with two tenants' keys. Each test cleans its owners."""
    s = settings.model_copy(update={"api_keys": {hash_api_key(k): t for k, t in KEYS.items()}})
    with TestClient(create_app(s, memory)) as client:
        yield client


def auth(key: str = "key-a") -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process environment points the CLI (which reads Settings()) at the test Neo4j."""
    monkeypatch.setenv("GRAPHMEM_NEO4J_INSTANCE_DIR", str(settings.neo4j_instance_dir))
    monkeypatch.setenv("GRAPHMEM_NEO4J_BOLT_PORT", str(settings.neo4j_bolt_port))
    monkeypatch.setenv("GRAPHMEM_NEO4J_HTTP_PORT", str(settings.neo4j_http_port))
    monkeypatch.setenv("GRAPHMEM_NEO4J_VERSION", settings.neo4j_version)


@pytest.fixture
def limited(settings: Settings, memory: Memory, tenant: str) -> Iterator[dict[str, Any]]:
    """A client of the API with a key for the whole tenant (``full``) and one for alice only
    (``alice``), and two fresh owners, alice and bob."""
    alice, bob = f"alice-{uuid.uuid4().hex[:10]}", f"bob-{uuid.uuid4().hex[:10]}"
    grants: dict[str, str | Access] = {
        "full": tenant, "alice": Access(tenant=tenant, owners=frozenset({alice}))}
    s = settings.model_copy(update={"api_keys": {hash_api_key(k): g for k, g in grants.items()}})
    with TestClient(create_app(s, memory)) as client:
        yield {"client": client, "alice": alice, "bob": bob}
