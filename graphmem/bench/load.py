"""Load test of the HTTP API (`graphmem bench load`): throughput, latency and errors of concurrent
search and write clients, at several concurrency levels, and where the CPU goes.

It starts `graphmem serve` in a child process (``--workers`` API processes) on a free loopback port
with a fresh key and tenant, or targets a running server (``url`` and ``key``). It seeds the tenant
with LoCoMo conversations (one owner each, owners named uniquely for the run), then, per level,
runs that many search clients and the given number of write clients (threads, one keep-alive
connection each, `Client`) for a fixed time. A search client asks the LoCoMo questions in turn; a
write client posts batches of new messages (copies of LoCoMo turns under a writer owner). Reported
per level: requests/s, p50/p95/p99 and errors by kind (HTTP status or exception), for searches and
writes apart, and the CPU used meanwhile by the API processes and by Neo4j (from /proc, when they
run on this machine) and by this load generator. What it wrote is deleted at the end (the owners),
even on error.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.config import hash_api_key
from graphmem.datasets import locomo

LEVELS = (1, 2, 4, 8, 16)
SEED_BATCH = 100
WRITE_BATCH = 5
TIMEOUT_S = 30.0
WARM_CLIENTS, WARM_S = 4, 10.0
"""The unreported warm-up of each server after the seeding: with 2 clients for 5 s, the first
level measured still ran 4-15% below the same level run again (Neo4j compiling the new queries
and the new index segments, the API processes' first searches)."""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- pure parts --------------------------------------------------------------------------------
@dataclass
class Tally:
    """What the clients of one kind saw during one level."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, ms: float) -> None:
        with self.lock:
            self.latencies_ms.append(ms)

    def error(self, kind: str) -> None:
        with self.lock:
            self.errors[kind] += 1


def summarize(latencies_ms: Sequence[float], errors: dict[str, int],
              seconds: float) -> dict[str, Any]:
    """Throughput of the successful requests, their p50/p95/p99 and the errors by kind."""
    n = len(latencies_ms)
    out: dict[str, Any] = {"requests": n, "per_s": n / seconds if seconds > 0 else 0.0,
                           "errors": dict(sorted(errors.items())),
                           "error_count": sum(errors.values())}
    if n:
        p50, p95, p99 = np.percentile(np.asarray(latencies_ms, dtype=np.float64), [50, 95, 99])
        out.update(p50_ms=float(p50), p95_ms=float(p95), p99_ms=float(p99))
    else:
        out.update(p50_ms=None, p95_ms=None, p99_ms=None)
    return out


def error_kind(status: int | None, exc: BaseException | None = None) -> str:
    """An error's name in the report: ``http_<status>`` or the exception's class."""
    return f"http_{status}" if exc is None else type(exc).__name__


def table(levels: Sequence[dict[str, Any]]) -> str:
    """The levels as plain text."""
    def ms(v: float | None) -> str:
        return f"{v:8.1f}" if v is not None else f"{'-':>8}"

    lines = [f"  {'clients':>7} {'search/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
             f"{'errors':>7} {'writes/s':>9} {'w p95':>8} {'api cpu':>8} {'neo4j':>6} "
             f"{'loadgen':>7} {'api ms/req':>10} {'neo4j ms/req':>12}"]
    for lv in levels:
        s, w, cpu = lv["search"], lv["write"], lv.get("cpu_cores", {})
        per = lv.get("cpu_ms_per_request", {})
        lines.append(
            f"  {lv['clients']:>7} {s['per_s']:9.1f} {ms(s['p50_ms'])} {ms(s['p95_ms'])} "
            f"{ms(s['p99_ms'])} {s['error_count'] + w['error_count']:>7} {w['per_s']:9.1f} "
            f"{ms(w['p95_ms'])} {_cores(cpu.get('api'))} {_cores(cpu.get('neo4j'), 6)} "
            f"{_cores(cpu.get('loadgen'), 7)} {_cores(per.get('api'), 10)} "
            f"{_cores(per.get('neo4j'), 12)}")
        kinds = {**{f"search {k}": v for k, v in s["errors"].items()},
                 **{f"write {k}": v for k, v in w["errors"].items()}}
        if kinds:
            lines.append("          errors: " + ", ".join(f"{k} x{v}" for k, v in kinds.items()))
    lines.append("  (cpu: cores busy on average during the level, of "
                 f"{os.cpu_count()} on this machine; ms/req: CPU milliseconds per successful "
                 "request, searches and writes together)")
    return "\n".join(lines)


def _cores(v: float | None, width: int = 8) -> str:
    return f"{v:{width}.2f}" if v is not None else f"{'-':>{width}}"


# --- CPU accounting (/proc) --------------------------------------------------------------------
def cpu_seconds(pids: Sequence[int]) -> float | None:
    """User + system CPU seconds of these processes, or None without /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total if Path("/proc").is_dir() else None


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (the API's worker processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


# --- the server --------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def started_server(key: str, tenant: str, workers: int) -> Iterator[tuple[str, int | None]]:
    """`graphmem serve --workers N` in a child process (settings from this environment) with
    ``key`` for ``tenant``; yields
    (url, pid) once /healthz answers, stops it with SIGTERM at the end."""
    import httpx

    port = _free_port()
    env = {**os.environ, "GRAPHMEM_API_KEYS": json.dumps({hash_api_key(key): tenant}),
           "GRAPHMEM_LOG_LEVEL": "WARNING"}
    cmd = [sys.executable, "-m", "graphmem.cli", "serve", "--host", "127.0.0.1", "--port",
           str(port), "--workers", str(workers), "--no-worker"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the API server exited during start-up ({proc.returncode})")
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the API server did not answer /healthz within 180 s")
            time.sleep(0.5)
        yield url, proc.pid
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


# --- the clients -------------------------------------------------------------------------------
class Client:
    """One keep-alive HTTP/1.1 connection of the standard library, posting JSON with the key.
    The load generator shares the machine with the server it measures: a search costs it about
    0.2 ms of CPU this way, against 0.8 ms through httpx (whose pool, events and models are
    worth having elsewhere), CPU the server's processes then get."""

    def __init__(self, url: str, key: str, timeout: float = TIMEOUT_S) -> None:
        parts = urllib.parse.urlsplit(url)
        https = parts.scheme == "https"
        kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
        self._conn = kind(parts.hostname or "localhost", parts.port, timeout=timeout)
        self._prefix = parts.path.rstrip("/")
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict[str, Any]) -> int:
        """POST ``body`` as JSON; the reply's status, its body read and dropped. A failed
        exchange closes the connection (the next request opens a new one) and raises."""
        try:
            self._conn.request("POST", self._prefix + path, json.dumps(body), self._headers)
            reply = self._conn.getresponse()
            reply.read()
        except BaseException:
            self._conn.close()
            raise
        return reply.status

    def close(self) -> None:
        self._conn.close()


def _request(client: Client, tally: Tally, path: str, body: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    try:
        status = client.post(path, body)
    except (OSError, http.client.HTTPException) as exc:  # timeouts and resets are OSErrors
        tally.error(error_kind(None, exc))
        return
    if 200 <= status < 300:
        tally.ok((time.perf_counter() - t0) * 1000)
    else:
        tally.error(error_kind(status))


def _searcher(client: Client, tally: Tally, queries: Sequence[tuple[str, str]], start: int,
              until: float) -> None:
    i = start
    while time.monotonic() < until:
        query, owner = queries[i % len(queries)]
        _request(client, tally, "/v1/search", {"query": query, "owner": owner})
        i += 1


def _writer(client: Client, tally: Tally, texts: Sequence[tuple[str, str]], owner: str,
            until: float) -> None:
    i = 0
    base = datetime(2024, 1, 1, tzinfo=UTC)
    while time.monotonic() < until:
        batch = []
        for _ in range(WRITE_BATCH):
            speaker, text = texts[i % len(texts)]
            batch.append({"id": f"{owner}/{i}", "owner": owner, "session_id": f"{owner}/s",
                          "speaker": speaker, "text": text,
                          "timestamp": (base + timedelta(seconds=30 * i)).isoformat()})
            i += 1
        _request(client, tally, "/v1/messages", {"messages": batch})


def run_level(url: str, key: str, clients: int, writers: int, seconds: float,
              queries: Sequence[tuple[str, str]], texts: Sequence[tuple[str, str]],
              owner_prefix: str, level_no: str,
              cpu_pids: dict[str, list[int]]) -> dict[str, Any]:
    """One level: ``clients`` search threads and ``writers`` write threads for ``seconds``."""
    searches, writes = Tally(), Tally()
    pool = [Client(url, key) for _ in range(clients + writers)]
    try:
        cpu0 = {k: cpu_seconds(v) for k, v in cpu_pids.items()}
        t0 = time.monotonic()
        until = t0 + seconds
        threads = [threading.Thread(target=_searcher, args=(pool[n], searches, queries,
                                                             n * 37, until))
                   for n in range(clients)]
        threads += [threading.Thread(target=_writer, args=(
            pool[clients + n], writes, texts, f"{owner_prefix}writer-{level_no}-{n}", until))
            for n in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        cpu1 = {k: cpu_seconds(v) for k, v in cpu_pids.items()}
    finally:
        for c in pool:
            c.close()
    cores: dict[str, float | None] = {}
    for k in cpu_pids:
        a, b = cpu0[k], cpu1[k]
        cores[k] = (b - a) / elapsed if a is not None and b is not None else None
    done = len(searches.latencies_ms) + len(writes.latencies_ms)
    return {"clients": clients, "writers": writers, "seconds": elapsed,
            "search": summarize(searches.latencies_ms, searches.errors, elapsed),
            "write": summarize(writes.latencies_ms, writes.errors, elapsed),
            "cpu_cores": cores,
            "cpu_ms_per_request": {k: v * elapsed * 1000 / done if v is not None and done
                                   else None for k, v in cores.items()}}


def seed(url: str, key: str, convs: Sequence[locomo.Conversation]) -> None:
    import httpx

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                      timeout=300) as client:
        for c in convs:
            for i in range(0, len(c.messages), SEED_BATCH):
                batch = [m.model_dump(mode="json") for m in c.messages[i:i + SEED_BATCH]]
                client.post("/v1/messages", json={"messages": batch}).raise_for_status()
            _log(f"  seeded {c.sample_id}: {len(c.messages)} messages")


def forget(url: str, key: str, owners: Sequence[str]) -> None:
    import httpx

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                      timeout=300) as client:
        for owner in owners:
            client.delete(f"/v1/owners/{owner.replace('/', '%2F')}")


def main(data: Path, *, url: str | None = None, key: str | None = None,
         workers: Sequence[int] = (1,), levels: Sequence[int] = LEVELS, writers: int = 1,
         seconds: float = 20.0, limit: int | None = 2, neo4j_pid: int | None = None,
         json_out: Path | None = None) -> dict[str, Any]:
    """Run the load test, print the table, write ``json_out``; returns the figures. Several
    ``workers`` counts start one server each (same tenant, seeded once): each level then runs
    against each server in turn, so a busy machine slows the variants alike."""
    run_id = secrets.token_hex(4)
    prefix = f"load-{run_id}-"
    convs = locomo.load(data, owner_prefix=prefix)
    convs = convs[:limit] if limit is not None else convs
    for c in convs:  # message ids are per tenant: unique per run, so a target server reseeds
        c.messages = [m.model_copy(update={"id": f"{prefix}{m.id}"}) for m in c.messages]
    queries = [(q.question, c.messages[0].owner) for c in convs if c.messages
               for q in c.questions if q.category in (1, 2, 3, 4)]
    texts = [(m.speaker, m.text) for c in convs for m in c.messages]
    if not queries:
        raise ValueError(f"{data}: no question of categories 1-4 in the conversations used")
    labels = [f"workers={n}" for n in workers] if url is None else [url]
    out: dict[str, Any] = {
        "target": url or "started", "conversations": len(convs), "messages": len(texts),
        "questions": len(queries), "seconds_per_level": seconds, "writers": writers,
        "write_batch": WRITE_BATCH, "cpus": os.cpu_count(),
        "variants": {label: [] for label in labels}}
    api_key = key or "gm_load_" + secrets.token_urlsafe(16)
    tenant = "load-" + run_id
    owners = [c.messages[0].owner for c in convs if c.messages]
    owners += [f"{prefix}writer-{label}-{lv}-{n}" for label in range(len(labels))
               for lv in range(len(levels)) for n in range(writers)]
    with ExitStack() as stack:
        servers: list[tuple[str, int | None]] = []
        if url is None:
            for n in workers:
                servers.append(stack.enter_context(started_server(api_key, tenant, n)))
        else:
            if not key:
                raise ValueError("--url needs --key (an API key of the tenant to load)")
            servers.append((url.rstrip("/"), None))
        pids: list[dict[str, list[int]]] = []
        for _, pid in servers:
            cpu_pids: dict[str, list[int]] = {"loadgen": [os.getpid()]}
            if pid is not None:
                cpu_pids["api"] = process_tree(pid)
            if neo4j_pid is not None:
                cpu_pids["neo4j"] = [neo4j_pid]
            pids.append(cpu_pids)
        base = servers[0][0]
        try:
            _log(f"seeding {len(texts)} messages ...")
            seed(base, api_key, convs)
            for (server, _), cpu_pids in zip(servers, pids, strict=True):  # warm-up, unreported
                run_level(server, api_key, WARM_CLIENTS, 0, min(WARM_S, seconds), queries,
                          texts, prefix, "", cpu_pids)
            for n, clients in enumerate(levels):
                for v, ((server, _), cpu_pids) in enumerate(zip(servers, pids, strict=True)):
                    _log(f"{labels[v]}: {clients} search clients + {writers} writers, "
                         f"{seconds:.0f} s ...")
                    out["variants"][labels[v]].append(run_level(
                        server, api_key, clients, writers, seconds, queries, texts, prefix,
                        f"{v}-{n}", cpu_pids))
                if json_out is not None:
                    json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        finally:
            forget(base, api_key, owners)
    print(f"Load test: {len(texts)} messages seeded, {len(queries)} questions, {writers} write "
          f"client(s) posting {WRITE_BATCH} messages per request, {seconds:.0f} s per level")
    for label, rows in out["variants"].items():
        print(f"{label}\n{table(rows)}")
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out
