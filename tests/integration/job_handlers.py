"""Handlers, a worker process, a fake LLM server and helpers for tests/integration/test_jobs.py.

Worker process: ``python -m tests.integration.job_handlers KIND LEASE_S CONCURRENCY LOG``: runs
workers for KIND (handler `record`) against the Neo4j named by the GRAPHMEM_NEO4J_* variables,
writes ``ready <pid>`` to LOG once connected, and stops on SIGTERM. No embedding model is loaded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, TypeVar

from fastapi.testclient import TestClient

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.jobs import Job
from graphmem.models import MessageIn
from graphmem.ops.worker import JobContext, run_workers
from graphmem.service import Memory
from graphmem.store import Store
from tests.support.http_peer import serving

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def append(path: str | Path, line: str) -> None:
    """One line appended in one write (O_APPEND): safe across processes."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def record(ctx: JobContext, job: Job) -> None:
    """Logs ``start`` and ``done`` lines (job id, attempt, pid) to payload["log"]; on a job's
    first attempt sleeps payload["sleep_s"] in between."""
    log = job.payload["log"]
    append(log, f"start {job.id} {job.attempts} {os.getpid()}")
    if job.attempts == 1:
        time.sleep(float(job.payload.get("sleep_s", 0)))
    append(log, f"done {job.id} {job.attempts} {os.getpid()}")


class NoEmbedder:
    """Workers running `record` never embed: skip loading the model (seconds)."""

    name = "none"
    dimensions = 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("not used by these tests")


def main(argv: list[str]) -> None:
    kind, lease_s, concurrency, log = argv[0], float(argv[1]), int(argv[2]), argv[3]
    settings = Settings()
    memory = Memory(settings, Store(settings), NoEmbedder())
    memory.store.ping()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    append(log, f"ready {os.getpid()}")
    run_workers(memory, {kind: record}, concurrency, stop, lease_s=lease_s, poll_s=0.05)
    memory.close()


# --- a fake OpenAI-compatible server: the LLM "comes back" ----------------------------------
class _Chat(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps({
            "id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": '{"ok": true}'}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@contextmanager
def fake_llm(port: int) -> Iterator[str]:
    """Serve chat completions answering {"ok": true} on 127.0.0.1:port; yields the base URL."""
    with serving(_Chat, port):
        yield f"http://127.0.0.1:{port}/v1"


# --- helpers of the tests ------------------------------------------------------------------
def kind(name: str) -> str:
    """A kind of this test only: no other test's worker claims its jobs."""
    return f"test_{name}_{uuid.uuid4().hex[:8]}"


def wait_for(check: Callable[[], T], timeout: float = 15.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def ingest(mem: Memory, tenant: str, *messages: dict[str, Any]) -> None:
    mem.ops(tenant).ingest_messages([MessageIn.model_validate(m) for m in messages])


@contextmanager
def client(settings: Settings, mem: Memory, *tenants: str) -> Iterator[TestClient]:
    """The API with key k<i> for tenants[i]."""
    keys = {hash_api_key(f"k{i}"): t for i, t in enumerate(tenants)}
    with TestClient(create_app(settings.model_copy(update={"api_keys": keys}), mem)) as c:
        yield c


def key(i: int = 0) -> dict[str, str]:
    return {"Authorization": f"Bearer k{i}"}


def start_worker(settings: Settings, kind_: str, lease_s: float, log: Path,
                 concurrency: int = 1) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "GRAPHMEM_NEO4J_INSTANCE_DIR": str(settings.neo4j_instance_dir),
           "GRAPHMEM_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
           "GRAPHMEM_NEO4J_HTTP_PORT": str(settings.neo4j_http_port)}
    args = [kind_, str(lease_s), str(concurrency), str(log)]
    with open(f"{log}.stderr", "ab") as err:
        return subprocess.Popen([sys.executable, "-m", "tests.integration.job_handlers", *args],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)


def lines(log: Path, word: str) -> list[list[str]]:
    text = log.read_text() if log.exists() else ""
    return [ln.split() for ln in text.splitlines() if ln.startswith(word + " ")]


def stop_all(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


if __name__ == "__main__":
    main(sys.argv[1:])
