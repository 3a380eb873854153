"""Routes for the job queue: the caller's jobs with counts per state, and rerunning one."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from graphmem.jobs import Job, JobList, JobQueue, JobState
from graphmem.models import MAX_SKIP


def router(Tenant: Any, Mem: Any) -> APIRouter:
    r = APIRouter(prefix="/v1")

    @r.get("/jobs", response_model=JobList)
    def list_jobs(
        tenant: Tenant, mem: Mem, state: JobState | None = None,
        skip: Annotated[int, Query(ge=0, le=MAX_SKIP)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> JobList:
        """This tenant's jobs, most recently changed first (``state`` filters), and how many
        it has in each state. Failed jobs stay here, with ``last_error``, until rerun."""
        queue = JobQueue(mem.store)
        return JobList(jobs=queue.list(tenant, state, limit, skip), counts=queue.counts(tenant))

    @r.post("/jobs/{job_id:path}/rerun", response_model=Job)
    def rerun(job_id: Annotated[str, Path(min_length=1)], tenant: Tenant, mem: Mem) -> Job:
        """A failed or done job back to pending (attempts reset): 404 for an unknown id, 409
        while it is pending or running."""
        return JobQueue(mem.store).rerun(tenant, job_id)

    return r
