"""Background jobs whose state lives in Neo4j: derived memory (formation) runs here, never on the
request path, and is never silently dropped.

A `:Job` is ``pending`` (claimable once ``run_after`` has passed), ``running`` (a worker holds
it until ``lease_until``; its heartbeat extends the lease), ``done`` or ``failed`` (kept and
listed; `JobQueue.rerun` puts it back). Guarantees:

* Identity: a job's id is ``<kind>-<sha256(kind, key)[:20]>-<generation>``. While a job of a
  kind+key is pending and unclaimed, enqueueing the same kind+key again does not add a job (its
  payload is replaced by the newest); once it is claimed, the next enqueue creates generation
  n+1, so work that arrived after a run started is run too. A key made of several names is
  built with `job_key` (each part's ``%`` and ``/`` percent-encoded), so two different sessions
  never share a key: a ``form_session`` job's key is ``job_key(owner, session_id)``. Handlers
  read what to work on from the payload, never from the key, so jobs stored before keys were
  encoded (``owner/session_id`` verbatim) still run as they are.
* Claiming is atomic: a claim locks the candidate and reads its state again under the lock, so
  two workers never hold the same job. A job whose lease expired (its worker crashed) is
  claimable again; delivery is at-least-once, so handlers must be idempotent.
* A failed run goes back to pending after an exponential backoff (`backoff_s`) until
  ``max_attempts`` runs were made, then stays ``failed`` with ``last_error``.
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from graphmem.errors import Conflict, NotFound
from graphmem.models import STATES, Job, JobList, JobState
from graphmem.store.jobs import FORM_SESSION, JobStore, NewJob, job_key, job_key_parts

if TYPE_CHECKING:
    from graphmem.store import Store

__all__ = ["FORM_SESSION", "Job", "JobList", "JobQueue", "JobState", "PermanentJobError",
           "backoff_s", "job_key", "job_key_parts"]

MAX_ERROR_CHARS = 4000
CLAIM_TRIES = 10
RETRY_SPREAD = 8


class PermanentJobError(Exception):
    """Raised by a handler when retrying cannot help: the job fails at once (re-runnable)."""


def backoff_s(attempts: int, base_s: float, max_s: float) -> float:
    """Delay before the next run after ``attempts`` failed runs: base, 2 base, 4 base, ..."""
    return float(min(max_s, base_s * 2.0 ** max(attempts - 1, 0)))


def describe(exc: BaseException) -> str:
    """What ``last_error`` records: the exception's type and message."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


class JobQueue:
    """The queue API over a `Store`; cheap to build (no state but the store's settings)."""

    def __init__(self, store: Store) -> None:
        self.settings = store.settings
        self._jobs = JobStore(store)

    def enqueue(self, tenant: str, kind: str, key: str, payload: dict[str, Any] | None = None,
                owner: str | None = None) -> str:
        """Enqueue one job in its own transaction; returns its id."""
        rows = self._jobs.enqueue(tenant, [NewJob(kind, key, payload or {}, owner)],
                                  self.settings.job_max_attempts)
        return str(rows[0]["id"])

    def claim(self, worker_id: str, kinds: list[str], lease_s: float,
              tenant: str | None = None) -> Job | None:
        """The oldest claimable job of these kinds (of one tenant, or any), now running and
        leased to ``worker_id``; None when there is none."""
        for attempt in range(CLAIM_TRIES):
            spread = 1 if attempt == 0 else RETRY_SPREAD  # lost a race: spread out
            row, claimed = self._jobs.claim(worker_id, uuid.uuid4().hex, lease_s, kinds,
                                            tenant, spread)
            if row is None:
                return None
            if claimed:
                return Job.from_row(row)
        return None  # busy: the caller polls again

    def heartbeat(self, job: Job, lease_s: float) -> bool:
        """Extend the lease; False if the job is no longer ours (lease lost to a reclaim)."""
        return self._jobs.heartbeat(job.tenant, job.id, _claim(job), lease_s)

    def complete(self, job: Job, result: Mapping[str, Any] | None = None) -> bool:
        """Mark done, keeping the handler's ``result`` (JSON); False if the job is no longer
        ours."""
        result_json = None if result is None else json.dumps(result, sort_keys=True, default=str)
        return self._jobs.complete(job.tenant, job.id, _claim(job), result_json) is not None

    def fail(self, job: Job, error: str, retry: bool = True) -> Job | None:
        """Record a failed run: pending after a backoff while attempts remain (and ``retry``),
        else failed. None if the job is no longer ours."""
        s = self.settings
        again = retry and job.attempts < job.max_attempts
        delay = backoff_s(job.attempts, s.job_backoff_base_s, s.job_backoff_max_s)
        row = self._jobs.fail(job.tenant, job.id, _claim(job), error, again, delay)
        return None if row is None else Job.from_row(row)

    def get(self, tenant: str, job_id: str) -> Job:
        row = self._jobs.get(tenant, job_id)
        if row is None:
            raise NotFound(f"no job {job_id!r}")
        return Job.from_row(row)

    def list(self, tenant: str, state: JobState | None = None, limit: int = 100,
             skip: int = 0, owner: str | None = None) -> builtins.list[Job]:
        """The tenant's jobs, most recently changed first (``owner``: that owner's only)."""
        return [Job.from_row(r) for r in self._jobs.list(tenant, state, skip, limit, owner)]

    def counts(self, tenant: str, owner: str | None = None) -> dict[str, int]:
        found = self._jobs.counts(tenant, owner)
        return {s: found.get(s, 0) for s in STATES}

    def rerun(self, tenant: str, job_id: str) -> Job:
        """A failed or done job back to pending (attempts reset). NotFound for an unknown id,
        Conflict if it is pending or running."""
        found = self._jobs.rerun(tenant, job_id)
        if found is None:
            raise NotFound(f"no job {job_id!r}")
        before, row = found
        if before not in ("failed", "done"):
            raise Conflict(f"job {job_id!r} is {before}: only failed or done jobs are rerun",
                           field="job_id")
        return Job.from_row(row)

    def prune_done(self, older_than: timedelta, tenant: str | None = None,
                   step: int = 1000) -> int:
        """Delete done jobs finished more than ``older_than`` ago (of one tenant, or all), in
        transactions of ``step``; the newest job of each kind+key stays. Returns how many."""
        before = datetime.now(UTC) - older_than
        total = 0
        while (removed := self._jobs.prune_done(tenant, before, step)) > 0:
            total += removed
            if removed < step:
                break
        return total


def _claim(job: Job) -> str:
    if job.claim is None:
        raise ValueError(f"job {job.id!r} was not claimed by this process")
    return job.claim
