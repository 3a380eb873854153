"""Jobs against the real Neo4j: enqueued with the messages, claimed once, reclaimed after a
crash, retried with backoff, kept as failed (listed, re-runnable), tenant-scoped."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from graphmem.cli import app as cli
from graphmem.config import Settings
from graphmem.errors import Conflict
from graphmem.jobs import Job, JobQueue
from graphmem.llm import LLMClient, LLMSettings
from graphmem.ops import worker as jobs_worker
from graphmem.ops.worker import Worker, run_workers
from graphmem.service import Memory
from graphmem.store import Store
from tests.integration.helpers import msg, owner
from tests.integration.job_handlers import (
    client,
    fake_llm,
    ingest,
    key,
    kind,
    lines,
    start_worker,
    stop_all,
    wait_for,
)


@pytest.fixture(scope="module")
def fast(settings: Settings, memory: Memory) -> Iterator[Memory]:
    """A Memory whose jobs retry fast: 3 attempts, backoff 0.5 s then 0.8 s (the cap)."""
    s = settings.model_copy(update={"job_max_attempts": 3, "job_backoff_base_s": 0.5,
                                    "job_backoff_max_s": 0.8, "job_lease_s": 2.0})
    mem = Memory(s, Store(s), memory.embedder)
    yield mem
    mem.close()


# --- enqueueing ------------------------------------------------------------------------------
def test_ingest_enqueues_one_job_per_touched_session(memory: Memory, tenant: str) -> None:
    q, who = JobQueue(memory.store), owner()
    ingest(memory, tenant, msg(0, who, "s1"), msg(1, who, "s1"), msg(0, who, "s2"))
    jobs = {j.key: j for j in q.list(tenant)}
    assert sorted(jobs) == [f"{who}/s1", f"{who}/s2"]
    assert all(j.kind == "form_session" and j.state == "pending" and j.generation == 1
               for j in jobs.values())
    assert jobs[f"{who}/s2"].payload == {"owner": who, "session_id": "s2"}
    assert jobs[f"{who}/s2"].owner == who
    ingest(memory, tenant, msg(0, who, "s1"))  # nothing new: no job touched
    ingest(memory, tenant, msg(2, who, "s1"))  # s1's job is pending: it stays one job
    after = {j.key: j for j in q.list(tenant)}
    assert {j.id for j in after.values()} == {j.id for j in jobs.values()}
    assert after[f"{who}/s1"].updated_at > jobs[f"{who}/s1"].updated_at
    assert after[f"{who}/s2"].updated_at == jobs[f"{who}/s2"].updated_at
    with pytest.raises(Conflict):  # a failed batch writes nothing, so enqueues nothing
        ingest(memory, tenant, msg(0, who, "s3"), msg(0, who, "s1", text="other"))
    assert len(q.list(tenant)) == 2 and q.counts(tenant)["pending"] == 2


def test_setting_off_enqueues_nothing(settings: Settings, memory: Memory, tenant: str) -> None:
    s = settings.model_copy(update={"formation_jobs": False})
    mem = Memory(s, Store(s), memory.embedder)
    try:
        ingest(mem, tenant, msg(0, owner()))
        assert JobQueue(mem.store).list(tenant) == []
    finally:
        mem.close()


def test_messages_after_a_claim_get_a_follow_up_job(memory: Memory, tenant: str) -> None:
    q, who = JobQueue(memory.store), owner()
    ingest(memory, tenant, msg(0, who))
    job = q.claim("test-worker", ["form_session"], 30, tenant=tenant)
    assert job is not None and job.state == "running" and job.attempts == 1
    ingest(memory, tenant, msg(1, who))
    ingest(memory, tenant, msg(2, who))  # absorbed by the pending follow-up
    jobs = sorted(q.list(tenant), key=lambda j: j.generation)
    assert [(j.generation, j.state) for j in jobs] == [(1, "running"), (2, "pending")]
    assert jobs[1].id == job.id.rsplit("-", 1)[0] + "-2"
    assert q.complete(job) and q.get(tenant, job.id).state == "done"


def test_default_handler_forms_the_session(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    ingest(memory, tenant, *(msg(i, who, text=f"turn {i} about the trip to Lisbon") for i in
                             range(4)))
    worker = Worker(memory, tenant=tenant)  # DEFAULT_HANDLERS: form_session -> formation
    assert worker.run_once() and not worker.run_once()
    [job] = JobQueue(memory.store).list(tenant)
    assert (job.state, job.last_error) == ("done", None)
    formed = cypher("MATCH (m:Message {tenant: $t, owner: $o}) WHERE EXISTS "
                    "{ (:Episode)-[:DERIVED_FROM]->(m) } RETURN count(m) AS n", t=tenant, o=who)
    assert formed == [{"n": 4}]  # every message is in an episode


def test_concurrent_enqueues_and_claims(fast: Memory, tenant: str) -> None:
    """Racing enqueues of one kind+key make one pending job; racing a claimer, an enqueue
    never writes to a job already claimed (its payload is what the claimer saw)."""
    q, k = JobQueue(fast.store), kind("mix")
    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(lambda n: q.enqueue(tenant, k, "same", {"n": n}), range(16)))
    assert len(ids) == 1 and len(q.list(tenant)) == 1
    seen: dict[str, dict[str, Any]] = {}
    completed: list[bool] = []
    stop = threading.Event()

    def claimer() -> None:  # claims and completes until the enqueues are over and none is left
        while True:  # stop is read before the claim: an empty claim ends the loop only when
            over = stop.is_set()  # it began after the last enqueue had committed
            if (job := q.claim("c", [k], 30, tenant)) is not None:
                seen[job.id] = job.payload
                completed.append(q.complete(job))
            elif over:
                return

    thread = threading.Thread(target=claimer)
    thread.start()
    with ThreadPoolExecutor(4) as pool:
        for rnd in range(5):  # the enqueues race the claimer; each round waits for a claim,
            before = len(seen)  # so the run sees several jobs whatever the machine's speed
            ids |= set(pool.map(lambda n: q.enqueue(tenant, k, "same", {"n": n}),
                                range(rnd * 20, rnd * 20 + 20)))
            deadline = time.monotonic() + 30
            while len(seen) == before and time.monotonic() < deadline:
                time.sleep(0.01)
    stop.set()
    thread.join()
    jobs = {j.id: j for j in q.list(tenant, limit=1000)}
    assert len(jobs) >= 5 and set(jobs) == ids == set(seen) and all(completed)
    assert all(j.state == "done" and j.payload == seen[j.id] for j in jobs.values())


# --- claiming ------------------------------------------------------------------------------
def test_racing_worker_threads_run_each_job_once(fast: Memory, tenant: str) -> None:
    q, k, runs, lock = JobQueue(fast.store), kind("race"), [], threading.Lock()

    def handler(_: Memory, job: Job) -> None:
        with lock:
            runs.append(job.id)
        time.sleep(0.01)

    ids = [q.enqueue(tenant, k, str(i)) for i in range(30)]
    assert run_workers(fast, {k: handler}, 4, drain=True) == 30
    assert sorted(runs) == sorted(ids)
    assert q.counts(tenant) == {"pending": 0, "running": 0, "done": 30, "failed": 0}
    assert {j.attempts for j in q.list(tenant)} == {1}


def test_two_worker_processes_run_each_job_once(settings: Settings, fast: Memory, tenant: str,
                                                tmp_path: Path) -> None:
    q, k, log = JobQueue(fast.store), kind("proc"), tmp_path / "log"
    procs = [start_worker(settings, k, 5, log, concurrency=2) for _ in range(2)]
    try:
        wait_for(lambda: len(lines(log, "ready")) == 2)
        ids = [q.enqueue(tenant, k, str(i), {"log": str(log), "sleep_s": 0.05})
               for i in range(30)]
        wait_for(lambda: q.counts(tenant)["done"] == 30, timeout=30)
    finally:
        stop_all(*procs)
    done = lines(log, "done")
    assert sorted(d[1] for d in done) == sorted(ids)  # each job exactly once
    assert {d[3] for d in done} == {str(p.pid) for p in procs}  # both processes worked


def test_killed_worker_job_is_claimed_again_after_its_lease(
        settings: Settings, fast: Memory, tenant: str, tmp_path: Path) -> None:
    q, k, log, lease = JobQueue(fast.store), kind("kill"), tmp_path / "log", 1.5
    jid = q.enqueue(tenant, k, "victim", {"log": str(log), "sleep_s": 60})
    first = start_worker(settings, k, lease, log)
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_for(lambda: lines(log, "start"))
        second = start_worker(settings, k, lease, log)  # a live worker's job is not taken:
        wait_for(lambda: len(lines(log, "ready")) == 2)
        time.sleep(2 * lease)
        held = q.get(tenant, jid)
        assert held.state == "running" and held.attempts == 1 and len(lines(log, "start")) == 1
        assert held.started_at and held.lease_until
        assert held.lease_until > held.started_at + timedelta(seconds=lease)  # heartbeats
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        orphan = q.get(tenant, jid)
        done = wait_for(lambda: (j := q.get(tenant, jid)).state == "done" and j, timeout=20)
    finally:
        stop_all(first, *([second] if second else []))
    assert orphan.lease_until and done.started_at and done.started_at >= orphan.lease_until
    assert done.attempts == 2 and done.worker != held.worker
    assert [(s[1], s[2], s[3]) for s in lines(log, "start")] == [
        (jid, "1", str(first.pid)), (jid, "2", str(second.pid))]
    assert [d[2] for d in lines(log, "done")] == ["2"]


def test_expired_claims_cannot_finish_and_crash_loops_end_failed(
        fast: Memory, tenant: str) -> None:
    q, k = JobQueue(fast.store), kind("lost")
    jid = q.enqueue(tenant, k, "x")
    claims = []
    for attempt in (1, 2, 3):
        job = wait_for(lambda: q.claim("w", [k], 0.2, tenant), timeout=5)
        assert job.attempts == attempt
        claims.append(job)
    assert not q.complete(claims[0]) and q.fail(claims[1], "late") is None
    assert not q.heartbeat(claims[0], 10) and q.heartbeat(claims[2], 0.2)
    time.sleep(0.3)
    assert q.claim("w4", [k], 0.2, tenant) is None  # all attempts used: failed, not claimed
    job = q.get(tenant, jid)
    assert job.state == "failed" and (job.last_error or "").startswith("WorkerLost: ")


# --- failures ------------------------------------------------------------------------------
def test_failures_retry_with_backoff_then_stay_failed_listed_and_rerunnable(
        settings: Settings, fast: Memory, tenant: str) -> None:
    q, k, broken = JobQueue(fast.store), kind("flaky"), [True]

    def flaky(_: Memory, job: Job) -> None:
        if broken[0]:
            raise RuntimeError("boom")

    jid = q.enqueue(tenant, k, "x")
    worker = Worker(fast, {k: flaky}, lease_s=2, poll_s=0.05)
    delays = []
    for attempt in (1, 2, 3):
        wait_for(worker.run_once, timeout=5)
        job = q.get(tenant, jid)
        assert job.attempts == attempt and job.last_error == "RuntimeError: boom"
        if attempt < 3:
            assert job.state == "pending" and not worker.run_once()  # backing off
            delays.append(job.run_after - job.updated_at)
    assert delays == [timedelta(seconds=0.5), timedelta(seconds=0.8)]
    assert job.state == "failed"
    with client(settings, fast, tenant) as api:
        body = api.get("/v1/jobs", params={"state": "failed"}, headers=key()).json()
        assert body["counts"] == {"pending": 0, "running": 0, "done": 0, "failed": 1}
        assert [(j["id"], j["last_error"]) for j in body["jobs"]] == [(jid, "RuntimeError: boom")]
        assert "claim" not in body["jobs"][0]
        r = api.post(f"/v1/jobs/{jid}/rerun", headers=key())
        assert r.status_code == 200 and (r.json()["state"], r.json()["attempts"]) == ("pending", 0)
        assert api.post(f"/v1/jobs/{jid}/rerun", headers=key()).status_code == 409
        broken[0] = False
        assert worker.run_once()
        body = api.get("/v1/jobs", params={"state": "done"}, headers=key()).json()
        assert [j["id"] for j in body["jobs"]] == [jid] and body["jobs"][0]["reruns"] == 1
        assert api.post("/v1/jobs/no-such-job/rerun", headers=key()).status_code == 404


class Ok(BaseModel):
    ok: bool


def test_llm_outage_leaves_jobs_failed_and_listed_never_lost(
        settings: Settings, fast: Memory, tenant: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed: the LLM is down

    def form_with_llm(_: Memory, job: Job) -> None:
        llm = LLMSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0,
                          timeout_s=1)
        with LLMClient(llm) as client_:
            client_.complete_structured("form_session", [{"role": "user", "content": "JSON"}],
                                        Ok)

    who, q = owner(), JobQueue(fast.store)
    worker = Worker(fast, {"form_session": form_with_llm}, tenant=tenant, poll_s=0.05)
    with client(settings, fast, tenant) as api:
        r = api.post("/v1/messages", json={"messages": [msg(0, who), msg(1, who)]},
                     headers=key())
        assert r.status_code == 201
        wait_for(lambda: not worker.run_once() and q.counts(tenant)["failed"], timeout=10)
        jobs = api.get("/v1/jobs", headers=key()).json()["jobs"]
        assert [(j["state"], j["attempts"]) for j in jobs] == [("failed", 3)]
        assert jobs[0]["last_error"].startswith("LLMFailure: LLM operation 'form_session'")
        stored = api.get("/v1/sessions/s1/messages", params={"owner": who}, headers=key())
        assert len(stored.json()) == 2
        with fake_llm(port):  # the LLM is back: rerun
            assert api.post(f"/v1/jobs/{jobs[0]['id']}/rerun", headers=key()).status_code == 200
            assert worker.run_once()
        assert q.get(tenant, jobs[0]["id"]).state == "done"


# --- API and CLI ---------------------------------------------------------------------------
def test_jobs_api_is_tenant_scoped(settings: Settings, memory: Memory) -> None:
    a, b = f"t-{uuid.uuid4().hex[:12]}", f"t-{uuid.uuid4().hex[:12]}"
    jid = JobQueue(memory.store).enqueue(a, kind("iso"), "x")
    with client(settings, memory, a, b) as api:
        mine = api.get("/v1/jobs", headers=key(0)).json()
        assert [j["id"] for j in mine["jobs"]] == [jid] and mine["counts"]["pending"] == 1
        theirs = api.get("/v1/jobs", headers=key(1)).json()
        assert theirs["jobs"] == [] and set(theirs["counts"].values()) == {0}
        assert api.post(f"/v1/jobs/{jid}/rerun", headers=key(1)).status_code == 404
        assert api.post(f"/v1/jobs/{jid}/rerun", headers=key(0)).status_code == 409
        assert api.get("/v1/jobs", params={"state": "nope"}, headers=key(0)).status_code == 422
        assert api.get("/v1/jobs").status_code == 401


def test_cli_worker_once_drains(settings: Settings, memory: Memory, tenant: str,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("instance_dir", "bolt_port", "http_port"):
        value = getattr(settings, f"neo4j_{name}")
        monkeypatch.setenv(f"GRAPHMEM_NEO4J_{name.upper()}", str(value))
    k, ran = kind("cli"), []
    monkeypatch.setattr(jobs_worker, "DEFAULT_HANDLERS", {k: lambda _, job: ran.append(job.id)})
    q = JobQueue(memory.store)
    ids = [q.enqueue(tenant, k, str(i)) for i in range(3)]
    r = CliRunner().invoke(cli, ["worker", "--once", "--concurrency", "2"])
    assert r.exit_code == 0, r.output
    assert "3 jobs run" in r.output and sorted(ran) == sorted(ids)


# --- retention -------------------------------------------------------------------------------
def test_old_done_jobs_are_pruned_but_ids_never_repeat(
    fast: Memory, tenant: str, cypher: Any
) -> None:
    q, k = JobQueue(fast.store), kind("keep")

    def finish(key: str, ok: bool = True) -> str:
        q.enqueue(tenant, k, key)
        job = q.claim("w", [k], 30, tenant)
        assert job is not None
        assert q.complete(job) if ok else q.fail(job, "boom", retry=False) is not None
        return job.id

    a = [finish("a") for _ in range(3)]  # generations 1..3 of key a
    only_b, failed, recent = finish("b"), finish("c", ok=False), finish("d")
    finish("d")
    cypher("MATCH (j:Job {tenant: $t}) WHERE j.id <> $recent "
           "SET j.done_at = j.done_at - duration('P10D'), "
           "j.updated_at = j.updated_at - duration('P10D')", t=tenant, recent=recent)
    assert q.prune_done(timedelta(days=7), tenant="t-none-such") == 0  # other tenants: none
    assert q.prune_done(timedelta(days=7), tenant) == 2
    left = {j.id for j in q.list(tenant, limit=100)}
    assert left == {a[2], only_b, failed, recent, recent[:-1] + "2"}
    assert q.enqueue(tenant, k, "a").endswith("-4")  # the kept newest numbers the next one
    assert q.prune_done(timedelta(days=7), tenant) == 1  # now a's #3 has a newer job
    assert q.prune_done(timedelta(days=7), tenant) == 0


def test_idle_worker_applies_retention(fast: Memory, tenant: str, cypher: Any) -> None:
    q, k = JobQueue(fast.store), kind("idle")
    for _ in range(2):
        q.enqueue(tenant, k, "same")
        job = q.claim("w", [k], 30, tenant)
        assert job is not None and q.complete(job)
    cypher("MATCH (j:Job {tenant: $t}) SET j.done_at = j.done_at - duration('P8D')", t=tenant)
    worker = Worker(fast, {k: lambda _m, _j: None}, tenant=tenant)
    assert worker.run_forever(threading.Event(), drain=True) == 0  # idle: prunes, then stops
    assert [j.generation for j in q.list(tenant)] == [2]
    assert worker.prune_done() == 0  # not again before PRUNE_EVERY_S
    off = Worker(fast, {k: lambda _m, _j: None}, tenant=tenant, prune=False)
    assert off.prune_done(force=True) == 0


# --- job keys --------------------------------------------------------------------------------
FORMED = ("MATCH (m:Message {tenant: $t}) WHERE EXISTS { (:Episode)-[:DERIVED_FROM]->(m) } "
          "RETURN m.owner AS o, m.session_id AS s, count(m) AS n ORDER BY o, s")


def test_sessions_whose_names_join_alike_each_get_their_job_and_episodes(
        memory: Memory, tenant: str, cypher: Any) -> None:
    """Owner ``c/a`` + session ``x`` and owner ``c`` + session ``a/x`` once shared one job key
    (``c/a/x``): one payload replaced the other and a session was never formed."""
    q, c = JobQueue(memory.store), owner()
    a, b = (f"{c}/a", "x"), (c, "a/x")
    ingest(memory, tenant, *(msg(i, *a, text=f"turn {i} about the trip to Lisbon")
                             for i in range(5)),
           *(msg(i, *b, text=f"turn {i} about the move to Porto") for i in range(5)))
    jobs = q.list(tenant)
    assert sorted(j.key for j in jobs) == sorted([f"{c}%2Fa/x", f"{c}/a%2Fx"])
    assert sorted((j.payload["owner"], j.payload["session_id"]) for j in jobs) == sorted([a, b])
    worker = Worker(memory, tenant=tenant)
    while worker.run_once():
        pass
    assert [(j.state, j.last_error) for j in q.list(tenant)] == [("done", None)] * 2
    assert cypher(FORMED, t=tenant) == [{"o": o, "s": s, "n": 5} for o, s in sorted([a, b])]


def test_a_job_stored_with_an_old_unencoded_key_still_runs(
        settings: Settings, memory: Memory, tenant: str, cypher: Any) -> None:
    """Jobs enqueued before keys were encoded keep their key (``owner/session_id`` verbatim);
    the handler reads the session from the payload, so they run as before."""
    s = settings.model_copy(update={"formation_jobs": False})
    mem, c = Memory(s, Store(s), memory.embedder), owner()
    try:
        ingest(mem, tenant, *(msg(i, f"{c}/a", "x") for i in range(3)))
    finally:
        mem.close()
    q = JobQueue(memory.store)
    old = q.enqueue(tenant, "form_session", f"{c}/a/x", {"owner": f"{c}/a", "session_id": "x"},
                    owner=f"{c}/a")
    assert Worker(memory, tenant=tenant).run_once()
    assert (q.get(tenant, old).state, q.get(tenant, old).key) == ("done", f"{c}/a/x")
    assert cypher(FORMED, t=tenant) == [{"o": f"{c}/a", "s": "x", "n": 3}]
