"""The pure parts of the job queue and the worker's bookkeeping, with a fake queue (no Neo4j)."""

from __future__ import annotations

import re
import sys
import threading
import time
import types
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem import cypher
from graphmem.config import Settings
from graphmem.jobs import Job, backoff_s, describe
from graphmem.ops.worker import (
    DEFAULT_HANDLERS,
    FormationNotInstalled,
    JobContext,
    PermanentJobError,
    Worker,
)
from graphmem.store.jobs import FORM_SESSION, NewJob, form_session_jobs, job_key, job_key_parts

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def job(**kw: Any) -> Job:
    row = {"tenant": "t", "id": "k-1", "kind": "k", "key": "x", "state": "running",
           "attempts": 1, "max_attempts": 3, "generation": 1, "created_at": T0,
           "updated_at": T0, "run_after": T0, "claim": "c1", "payload_json": '{"a": 1}'}
    return Job.from_row({**row, **kw})


def test_backoff_doubles_from_the_base_up_to_the_cap() -> None:
    assert [backoff_s(n, 5, 600) for n in range(1, 10)] == [5, 10, 20, 40, 80, 160, 320, 600,
                                                            600]
    assert backoff_s(0, 5, 600) == 5
    assert backoff_s(3, 0, 600) == 0


def test_job_slot_is_deterministic_url_safe_and_per_kind_and_key() -> None:
    a = NewJob("form_session", "alice/s 1?#", {"x": 1})
    assert a.slot == NewJob("form_session", "alice/s 1?#", {"y": 2}).slot
    assert a.slot != NewJob("form_session", "alice/s 2").slot
    assert a.slot != NewJob("other", "alice/s 1?#").slot
    assert re.fullmatch(r"form_session-[0-9a-f]{20}", a.slot)
    with pytest.raises(ValueError, match="job kind"):
        NewJob("bad kind/", "x")


def test_form_session_jobs_one_per_session() -> None:
    jobs = form_session_jobs([{"owner": "al", "session_id": "s1", "ids": {"m1"}},
                              {"owner": "al", "session_id": "s2", "ids": {"m2"}}])
    assert [(j.kind, j.key, j.payload, j.owner) for j in jobs] == [
        (FORM_SESSION, "al/s1", {"owner": "al", "session_id": "s1"}, "al"),
        (FORM_SESSION, "al/s2", {"owner": "al", "session_id": "s2"}, "al")]


def test_sessions_whose_names_join_alike_get_different_jobs() -> None:
    a, b = form_session_jobs([{"owner": "c/a", "session_id": "x"},
                              {"owner": "c", "session_id": "a/x"}])
    assert (a.key, b.key) == ("c%2Fa/x", "c/a%2Fx")
    assert a.slot != b.slot
    assert job_key("100%", "s") == "100%25/s" and job_key("%2F", "s") == "%252F/s"
    assert job_key("alice", "s 1?#") == "alice/s 1?#"  # plain names: the key as it always was


NAMES = st.lists(st.text(st.sampled_from("a/%2F") | st.characters()), min_size=1, max_size=4)


@given(NAMES, NAMES)
def test_job_key_is_injective_and_reversible(a: list[str], b: list[str]) -> None:
    assert job_key_parts(job_key(*a)) == a
    if a != b:
        assert job_key(*a) != job_key(*b)


def test_job_from_row_parses_the_payload_and_hides_the_claim_token() -> None:
    j = job(last_error=None, slot="k-abc")
    assert j.payload == {"a": 1} and j.claim == "c1" and j.last_error is None
    assert "claim" not in j.model_dump() and "payload_json" not in j.model_dump()


def test_describe_gives_type_and_message_truncated() -> None:
    assert describe(ValueError("nope")) == "ValueError: nope"
    assert len(describe(RuntimeError("x" * 10_000))) == 4000


def test_job_settings_defaults_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings()
    assert (s.formation_jobs, s.job_lease_s, s.job_max_attempts, s.job_backoff_base_s,
            s.job_backoff_max_s, s.worker_poll_s) == (True, 60, 5, 5, 600, 1.0)
    monkeypatch.setenv("GRAPHMEM_FORMATION_JOBS", "false")
    monkeypatch.setenv("GRAPHMEM_JOB_LEASE_S", "2.5")
    assert (Settings().formation_jobs, Settings().job_lease_s) == (False, 2.5)


@pytest.mark.parametrize("name", ["claim", "prune_done"])
def test_claim_and_retention_serve_one_tenant_when_given(name: str) -> None:
    """Workers serve every tenant, or one: ``$tenant`` if set (every other job query is bound
    to its tenant: the tenant lint of tests/unit/test_cypher.py)."""
    path = cypher.CYPHER_DIR / "queries" / "jobs" / f"{name}.cypher"
    body = "\n".join(ln for ln in path.read_text().splitlines() if not ln.startswith("//"))
    assert re.search(r"\$tenant IS NULL OR \w+\.tenant = \$tenant", body)


# --- the worker, over a fake queue ---------------------------------------------------------
class FakeQueue:
    def __init__(self, *jobs: Job) -> None:
        self.jobs = list(jobs)
        self.done: list[str] = []
        self.failed: list[tuple[str, str, bool]] = []
        self.beats = 0
        self.kinds: list[str] = []

    def claim(self, worker_id: str, kinds: list[str], lease_s: float,
              tenant: str | None = None) -> Job | None:
        self.kinds = kinds
        return self.jobs.pop(0) if self.jobs else None

    def heartbeat(self, job: Job, lease_s: float) -> bool:
        self.beats += 1
        return True

    def complete(self, job: Job, result: Any = None) -> bool:
        self.done.append(job.id)
        return True

    def fail(self, job: Job, error: str, retry: bool = True) -> Job | None:
        self.failed.append((job.id, error, retry))
        return job


class FakeStore:
    def tenant_stores(self, tenant: str) -> tuple[str, str]:
        return ("stores of", tenant)


class FakeMemory:
    settings = Settings()
    store = FakeStore()
    former = procedural = documents = None  # what a handler's JobContext holds


def worker(queue: FakeQueue, handlers: dict[str, Any], lease_s: float = 60) -> Worker:
    return Worker(FakeMemory(), handlers, "w", lease_s=lease_s, queue=queue)  # type: ignore


def test_run_once_completes_fails_and_reports_idle() -> None:
    def boom(_: Any, j: Job) -> None:
        raise KeyError("missing")

    def never(_: Any, j: Job) -> None:
        raise PermanentJobError("no point retrying")

    q = FakeQueue(job(id="a"), job(id="b", kind="bad"), job(id="c", kind="never"))
    w = worker(q, {"k": lambda _, j: None, "bad": boom, "never": never})
    assert [w.run_once() for _ in range(4)] == [True, True, True, False]
    assert q.kinds == ["bad", "k", "never"]
    assert q.done == ["a"]
    assert q.failed == [("b", "KeyError: 'missing'", True),
                        ("c", "PermanentJobError: no point retrying", False)]


def test_heartbeat_extends_the_lease_while_the_handler_runs() -> None:
    q = FakeQueue(job())
    w = worker(q, {"k": lambda _, j: time.sleep(0.4)}, lease_s=0.15)
    assert w.run_once() and q.done == ["k-1"] and q.beats >= 4
    beats = q.beats
    time.sleep(0.2)
    assert q.beats == beats  # stopped with the job


def test_run_forever_until_stopped_and_drain() -> None:
    q = FakeQueue(job(id="a"), job(id="b"))
    w = worker(q, {"k": lambda _, j: None})
    assert w.run_forever(threading.Event(), drain=True) == 2
    stop = threading.Event()
    stop.set()
    assert w.run_forever(stop) == 0


def test_form_session_handler_without_formation_fails_permanently(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "graphmem.formation.run", None)
    with pytest.raises(FormationNotInstalled, match="formation not installed"):
        DEFAULT_HANDLERS[FORM_SESSION](JobContext.of(FakeMemory()), job())  # type: ignore[arg-type]


def test_form_session_handler_delegates_to_formation(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any, Job]] = []
    fake = types.ModuleType("graphmem.formation.run")
    fake.form_session = lambda former, stores, j: calls.append(  # type: ignore[attr-defined]
        (former, stores, j))
    monkeypatch.setitem(sys.modules, "graphmem.formation.run", fake)
    former, j = object(), job()
    ctx = JobContext(former, None, None, FakeStore())  # type: ignore[arg-type]
    DEFAULT_HANDLERS[FORM_SESSION](ctx, j)
    # the handler is given the worker's Former and the job's tenant's stores, not the Memory
    assert calls == [(former, ("stores of", j.tenant), j)]


def test_run_forever_outlives_queue_errors() -> None:
    stop = threading.Event()

    class Flaky(FakeQueue):
        calls = 0

        def claim(self, *args: Any, **kw: Any) -> Job | None:
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("driver hiccup")
            return super().claim(*args, **kw)

        def complete(self, job: Job, result: Any = None) -> bool:
            stop.set()
            return super().complete(job, result)

    q = Flaky(job())
    w = Worker(FakeMemory(), {"k": lambda _, j: None}, "w", poll_s=0.01, queue=q)  # type: ignore
    assert w.run_forever(stop) == 1 and q.done == ["k-1"] and q.calls == 2
