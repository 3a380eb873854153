"""`graphmem serve --workers 2 --worker` for real: two API processes (each with its own Memory)
serve requests on one port, the formation jobs run once, in the supervising process, and SIGTERM
stops everything cleanly (exit 0, no process left behind)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from graphmem.bench.load import process_tree
from graphmem.config import Settings, hash_api_key
from tests.integration.helpers import msg, owner

KEY = "gm_workers_test_key"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_serve_with_two_processes_serves_and_stops_cleanly(settings: Settings,
                                                            tmp_path: Path) -> None:
    tenant, who, port = f"w-{os.getpid()}-{time.time_ns() % 10**8}", owner(), _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "GRAPHMEM_NEO4J_INSTANCE_DIR": str(settings.neo4j_instance_dir),
           "GRAPHMEM_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
           "GRAPHMEM_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
           "GRAPHMEM_API_KEYS": json.dumps({hash_api_key(KEY): tenant})}
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port",
                                 str(port), "--workers", "2", "--worker"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {KEY}"}
    try:
        deadline = time.monotonic() + 150
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        with httpx.Client(base_url=url, headers=auth, timeout=60) as client:
            r = client.post("/v1/messages", json={"messages": [msg(i, who) for i in range(3)]})
            assert r.status_code == 201, r.text
            for _ in range(6):  # new connections: the kernel spreads them over the processes
                with httpx.Client(base_url=url, headers=auth, timeout=60) as one:
                    r = one.post("/v1/search", json={"query": "hello", "owner": who})
                    assert r.status_code == 200 and r.json()["hits"], r.text
            deadline = time.monotonic() + 90
            while client.get("/v1/jobs").json()["counts"].get("done", 0) < 1:
                assert time.monotonic() < deadline, "the formation job never ran"
                time.sleep(0.5)
        tree = process_tree(proc.pid)
        api = [p for p in tree if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert len(api) == 2, tree
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    text = log.read_text()
    assert code == 0, text
    assert text.count("worker: running in the supervising process") == 1
    deadline = time.monotonic() + 20  # multiprocessing's resource tracker exits after its parent
    while [p for p in tree if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in tree if _alive(p)], text  # nothing left
    with httpx.Client(timeout=5) as client:  # the port is free again
        try:
            client.get(url + "/healthz")
            raise AssertionError("still answering after SIGTERM")
        except httpx.ConnectError:
            pass
