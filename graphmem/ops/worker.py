"""Workers: claim a job, run its handler while a heartbeat keeps the lease, record the outcome.

Handlers are registered by kind: ``Worker(memory, {"form_session": form_session, ...})``. A
handler that returns completes its job; one that raises fails the run (type and message go to
``last_error``; retried with backoff, or at once failed for a `PermanentJobError`). A worker
that dies mid-job loses nothing: its lease expires and another worker claims the job again.
Run several in one process with `run_workers` (threads), or start several processes. An idle
worker also applies retention (``job_keep_done_days``) every `PRUNE_EVERY_S`.
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from graphmem.documents.service import Documents
from graphmem.errors import GraphMemError
from graphmem.jobs import FORM_SESSION, Job, JobQueue, PermanentJobError, describe
from graphmem.procedural import jobs as procedural_jobs
from graphmem.procedural.service import Procedural
from graphmem.service import Memory
from graphmem.store import Store, TenantStores
from graphmem.store.documents import BUILD_TOPICS, EMBED_DOCUMENT, LABEL_TOPICS, PLACE_DOCUMENT
from graphmem.store.procedural import FORM_SKILLS, FORM_TRACE

if TYPE_CHECKING:
    from graphmem.formation.run import Former


@dataclass(frozen=True)
class JobContext:
    """What a job handler may use: the services that form derived memory and the stores of its
    job's tenant, not the whole `Memory` (a handler cannot reach the API's door, the pools or
    another tenant's stores)."""

    former: Former
    procedural: Procedural
    documents: Documents
    store: Store

    @classmethod
    def of(cls, memory: Memory) -> JobContext:
        return cls(memory.former, memory.procedural, memory.documents, memory.store)

    def stores(self, job: Job) -> TenantStores:
        """The stores of ``job``'s tenant."""
        return self.store.tenant_stores(job.tenant)


Handler = Callable[[JobContext, Job], Mapping[str, Any] | None]
log = logging.getLogger("graphmem.ops.worker")
PRUNE_EVERY_S = 600.0


class FormationNotInstalled(PermanentJobError):
    pass


def form_session(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``form_session`` handler: `graphmem.formation.run.form_session`, imported on first use;
    without it the job fails visibly (and can be rerun once formation is installed)."""
    try:
        module = importlib.import_module("graphmem.formation.run")
    except ModuleNotFoundError as exc:
        if exc.name not in ("graphmem.formation", "graphmem.formation.run"):
            raise
        raise FormationNotInstalled(
            "formation not installed: no module graphmem.formation.run; rerun this job once "
            "it is") from exc
    result: Mapping[str, Any] | None = module.form_session(ctx.former, ctx.stores(job), job)
    return result


def form_trace(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``form_trace`` handler (`graphmem.procedural.jobs.form_trace`)."""
    return procedural_jobs.form_trace(ctx.procedural, ctx.stores(job), job)


def form_skills(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``form_skills`` handler (`graphmem.procedural.jobs.form_skills`)."""
    return procedural_jobs.form_skills(ctx.procedural, ctx.stores(job), job)


def embed_document(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``embed_document`` handler: embed a large document version's chunks
    (`graphmem.documents.service.Documents.embed_pending`)."""
    return ctx.documents.embed_pending(ctx.stores(job), job.payload["id"])


def build_topics(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``build_topics`` handler: an owner's topic tree built again
    (`graphmem.documents.service.Documents.build_topics`)."""
    return ctx.documents.build_topics(ctx.stores(job), job.payload["owner"])


def place_document(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``place_document`` handler: a new document version placed under its nearest topics,
    the tree built again once enough changed
    (`graphmem.documents.service.Documents.place`)."""
    return ctx.documents.place(ctx.stores(job), job.payload["id"])


def label_topics(ctx: JobContext, job: Job) -> Mapping[str, Any] | None:
    """``label_topics`` handler: an LLM's labels and summaries of an owner's topics
    (`graphmem.documents.service.Documents.label_topics`)."""
    return ctx.documents.label_topics(ctx.stores(job), job.payload["owner"])


DEFAULT_HANDLERS: dict[str, Handler] = {FORM_SESSION: form_session, FORM_TRACE: form_trace,
                                        FORM_SKILLS: form_skills, EMBED_DOCUMENT: embed_document,
                                        BUILD_TOPICS: build_topics,
                                        PLACE_DOCUMENT: place_document,
                                        LABEL_TOPICS: label_topics}


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class _Heartbeat(threading.Thread):
    """Extends a job's lease every lease/3 seconds until stopped, or until the lease is lost."""

    def __init__(self, queue: JobQueue, job: Job, lease_s: float) -> None:
        super().__init__(name=f"graphmem-heartbeat-{job.id}", daemon=True)
        self._queue, self._job, self._lease_s = queue, job, lease_s
        self._done = threading.Event()
        self.lost = False

    def run(self) -> None:
        while not self._done.wait(max(self._lease_s / 3.0, 0.05)):
            try:
                if not self._queue.heartbeat(self._job, self._lease_s):
                    self.lost = True
                    log.warning("job %s: lease lost to another worker", self._job.id)
                    return
            except GraphMemError as exc:  # Neo4j away: keep trying while the lease lasts
                log.warning("job %s: heartbeat failed: %s", self._job.id, exc)

    def stop(self) -> None:
        self._done.set()
        self.join()


class Worker:
    """One claimer. Thread-safe to run several over one `Memory`, each in its own thread."""

    def __init__(
        self, memory: Memory, handlers: Mapping[str, Handler] | None = None,
        worker_id: str | None = None, lease_s: float | None = None, poll_s: float | None = None,
        tenant: str | None = None, queue: JobQueue | None = None, prune: bool = True,
    ) -> None:
        self.memory = memory
        self.handlers = dict(DEFAULT_HANDLERS if handlers is None else handlers)
        if not self.handlers:
            raise ValueError("a worker needs at least one handler")
        self.worker_id = worker_id or default_worker_id()
        self.lease_s = lease_s or memory.settings.job_lease_s
        self.poll_s = poll_s or memory.settings.worker_poll_s
        self.tenant = tenant
        """Only this tenant's jobs (None: every tenant's)."""
        self.queue = queue or JobQueue(memory.store)
        self.prune = prune
        """Apply retention when idle (`run_workers` lets one of its threads do it)."""
        self._next_prune = 0.0

    def run_once(self) -> bool:
        """Claim one job and run it; False when no job was claimable."""
        job = self.queue.claim(self.worker_id, sorted(self.handlers), self.lease_s, self.tenant)
        if job is None:
            return False
        self.run(job)
        return True

    def run(self, job: Job) -> None:
        """Run a claimed job's handler under a heartbeat and record the outcome."""
        beat = _Heartbeat(self.queue, job, self.lease_s)
        beat.start()
        error: str | None = None
        result: Mapping[str, Any] | None = None
        retry = True
        try:
            result = self.handlers[job.kind](JobContext.of(self.memory), job)
        except PermanentJobError as exc:
            error, retry = describe(exc), False
        except Exception as exc:
            error = describe(exc)
        finally:
            beat.stop()
        if error is None:
            ours = self.queue.complete(job, result)
        else:
            log.warning("job %s (%s) attempt %d failed: %s", job.id, job.kind, job.attempts,
                        error)
            ours = self.queue.fail(job, error, retry) is not None
        if not ours:
            log.warning("job %s: finished after its lease was lost; another worker has it",
                        job.id)

    def prune_done(self, force: bool = False) -> int:
        """Delete old done jobs (``job_keep_done_days``; 0 keeps them), at most once every
        `PRUNE_EVERY_S` unless ``force``; errors are logged, never raised. Returns how many."""
        keep = self.memory.settings.job_keep_done_days
        now = time.monotonic()
        if not self.prune or keep <= 0 or (now < self._next_prune and not force):
            return 0
        self._next_prune = now + PRUNE_EVERY_S
        try:
            removed = self.queue.prune_done(timedelta(days=keep), self.tenant)
        except Exception as exc:  # e.g. Neo4j away, or a race with another process's prune
            log.warning("worker %s: retention failed: %s", self.worker_id, exc)
            return 0
        if removed:
            log.info("worker %s: deleted %d done jobs finished over %g days ago",
                     self.worker_id, removed, keep)
        return removed

    def run_forever(self, stop: threading.Event, drain: bool = False,
                    on_job: Callable[[], None] | None = None) -> int:
        """Work until ``stop`` is set (or, with ``drain``, until nothing is claimable); returns
        how many jobs were run, calling ``on_job()`` after each (progress). Errors of the queue
        itself (Neo4j away) are logged and waited out; a job whose outcome could not be recorded
        is claimed again once its lease expires."""
        ran = 0
        while not stop.is_set():
            try:
                worked = self.run_once()
            except GraphMemError as exc:
                log.warning("worker %s: %s", self.worker_id, exc)
                worked = False
            except Exception:  # a long-running worker outlives surprises; its job's lease expires
                log.exception("worker %s: unexpected error", self.worker_id)
                worked = False
            ran += worked
            if worked and on_job is not None:
                on_job()
            if not worked:
                self.prune_done()
                if drain:
                    break
                stop.wait(self.poll_s)
        return ran


def run_workers(
    memory: Memory, handlers: Mapping[str, Handler] | None = None, concurrency: int = 1,
    stop: threading.Event | None = None, drain: bool = False, lease_s: float | None = None,
    poll_s: float | None = None, tenant: str | None = None,
    on_job: Callable[[], None] | None = None,
) -> int:
    """Run ``concurrency`` workers as threads until ``stop`` is set (or, with ``drain``, until
    no job is claimable); running jobs finish first. Returns the number of jobs run;
    ``on_job()`` is called (from the worker's thread) after each."""
    stop = stop or threading.Event()
    prefix = default_worker_id()
    workers = [Worker(memory, handlers, f"{prefix}/{i}", lease_s, poll_s, tenant,
                      prune=i == 0) for i in range(concurrency)]
    counts = [0] * concurrency

    def loop(i: int) -> None:
        counts[i] = workers[i].run_forever(stop, drain, on_job)

    threads = [threading.Thread(target=loop, args=(i,), name=f"graphmem-worker-{i}")
               for i in range(concurrency)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return sum(counts)


class BackgroundWorkers:
    """`run_workers` in a background thread of this process: how the API process runs formation
    itself (``graphmem serve --worker``, ``graphmem demo``). ``start()`` once; ``stop()`` on
    shutdown sets the stop event and waits for running jobs to finish."""

    def __init__(self, memory: Memory, concurrency: int = 1, tenant: str | None = None,
                 handlers: Mapping[str, Handler] | None = None) -> None:
        self._memory, self._concurrency, self._tenant = memory, concurrency, tenant
        self._handlers = handlers
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ran = 0
        """Jobs run so far (final once stopped)."""

    def _loop(self) -> None:
        self.ran = run_workers(self._memory, self._handlers, self._concurrency, self._stop,
                               tenant=self._tenant)

    def start(self) -> BackgroundWorkers:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="graphmem-workers",
                                            daemon=True)
            self._thread.start()
            log.info("in-process worker started (%d thread(s), tenant %s)", self._concurrency,
                     self._tenant or "all")
        return self

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
