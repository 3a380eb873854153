"""Several API processes and several workers on one database: the API is stateless, workers
scale by claiming jobs. Two `graphmem serve` processes (no worker in them) take interleaved,
concurrent writes for several owners (some batches sent to both); two `graphmem worker`
processes drain the formation jobs. Nothing acknowledged is lost, nothing is stored twice,
every job runs once, and every message ends up in exactly one episode."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphmem.config import Settings, hash_api_key
from graphmem.jobs import JobQueue
from graphmem.service import Memory
from tests.integration.conftest import _free_port
from tests.integration.helpers import msg, owner

ROOT = Path(__file__).resolve().parents[2]
KEY = "gm_cluster_test_key"
OWNERS, SESSIONS, TURNS = 4, 2, 12


def _env(settings: Settings, tenant: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    return {**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
            "GRAPHMEM_NEO4J_INSTANCE_DIR": str(settings.neo4j_instance_dir),
            "GRAPHMEM_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
            "GRAPHMEM_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
            "GRAPHMEM_API_KEYS": json.dumps({hash_api_key(KEY): tenant}),
            "GRAPHMEM_WORKER_IN_PROCESS": "false", "GRAPHMEM_WORKER_POLL_S": "0.2"}


@pytest.fixture
def cluster(settings: Settings, tenant: str, tmp_path: Path) -> Iterator[list[str]]:
    """Two API processes and two worker processes (only this tenant's jobs); yields the APIs'
    base URLs once both answer /readyz."""
    env = _env(settings, tenant)
    ports = [_free_port(), _free_port()]
    cli = [sys.executable, "-m", "graphmem.cli"]
    commands = [[*cli, "serve", "--host", "127.0.0.1", "--port", str(p)] for p in ports]
    commands += [[*cli, "worker", "--concurrency", "2", "--tenant", tenant]] * 2
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n, command in enumerate(commands):
            with open(tmp_path / f"proc{n}.log", "wb") as log:
                procs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log,
                                              stderr=subprocess.STDOUT))
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        deadline = time.monotonic() + 240  # loading the model takes seconds; more when busy
        for url in urls:
            while True:
                assert all(p.poll() is None for p in procs), _logs(tmp_path)
                assert time.monotonic() < deadline, "the API did not get ready\n" + _logs(tmp_path)
                try:
                    if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
        yield urls
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def _logs(folder: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in sorted(folder.glob("proc*.log")))


def _batches(owners: list[str]) -> list[list[dict[str, Any]]]:
    """Every owner's sessions cut into batches of 1-3 turns, interleaved across owners and
    sessions (in event-time order within a session, as an agent sends them)."""
    rng = random.Random(7)
    queues = []
    for who in owners:
        for s in range(SESSIONS):
            turns = [msg(i, who, f"s{s}", text=f"{who} session {s} turn {i}: we talked about "
                         f"{['hiking', 'the new job', 'a trip to Porto', 'her cat'][i % 4]}")
                     for i in range(TURNS)]
            cut, pos = [], 0
            while pos < len(turns):
                size = rng.randint(1, 3)
                cut.append(turns[pos:pos + size])
                pos += size
            queues.append(cut)
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def test_two_apis_and_two_workers_lose_nothing_and_form_nothing_twice(
        cluster: list[str], memory: Memory, tenant: str, cypher: Any, tmp_path: Path) -> None:
    logs = tmp_path
    owners = [owner() for _ in range(OWNERS)]
    batches = _batches(owners)
    headers = {"Authorization": f"Bearer {KEY}"}
    clients = [httpx.Client(base_url=u, headers=headers, timeout=60) for u in cluster]

    def send(n: int) -> list[str]:
        """Batch n to API n % 2; every fifth batch again to the other API (a client retry)."""
        acked = []
        targets = [n % 2] + ([(n + 1) % 2] if n % 5 == 0 else [])
        for t in targets:
            r = clients[t].post("/v1/messages", json={"messages": batches[n]})
            assert r.status_code == 201, r.text + "\n" + _logs(logs)
            acked += r.json()["ids"]
        return acked

    try:
        with ThreadPoolExecutor(6) as pool:
            acked = [i for ids in pool.map(send, range(len(batches))) for i in ids]
        sent = {m["id"] for b in batches for m in b}
        assert set(acked) == sent
        queue = JobQueue(memory.store)
        deadline = time.monotonic() + 60
        while True:
            counts = queue.counts(tenant)
            if counts["pending"] == counts["running"] == 0 and counts["done"] > 0:
                break
            assert time.monotonic() < deadline, counts
            time.sleep(0.3)
        assert counts["failed"] == 0
        stored = cypher("MATCH (m:Message {tenant: $t}) RETURN m.id AS id, "
                        "COUNT { (:Episode {tenant: $t})-[:DERIVED_FROM]->(m) } AS episodes",
                        t=tenant)
        assert sorted(r["id"] for r in stored) == sorted(sent)  # each acknowledged one, once
        assert {r["episodes"] for r in stored} == {1}  # each in exactly one episode
        jobs = queue.list(tenant, limit=1000)
        assert {j.state for j in jobs} == {"done"}
        assert [j.attempts for j in jobs] == [1] * len(jobs)  # no job ran twice
        workers = {j.worker.split(":")[1] for j in jobs if j.worker}
        assert len(workers) == 2, workers  # both worker processes claimed jobs
        formed = {j.key for j in jobs}
        assert len(formed) == OWNERS * SESSIONS
    finally:
        for c in clients:
            c.close()
        for who in owners:
            memory.for_tenant(tenant).messages.forget_owner(who)
