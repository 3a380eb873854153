"""Routes for the job queue: the caller's jobs with counts per state, one job, rerunning one,
retrying the fact extraction of episodes whose last one kept nothing."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from graphmem.jobs import Job, JobList, JobState
from graphmem.models import MAX_SKIP, NAME, ExtractionRetry, ExtractionRetryIn
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory

router = APIRouter(prefix="/v1")

@router.get("/jobs", response_model=JobList)
def list_jobs(
    mem: Annotated[TenantMemory, Depends(tenant_memory)], state: JobState | None = None,
    owner: Annotated[str | None, Query(min_length=1, max_length=200, pattern=NAME,
                                       description="Only this owner's jobs")] = None,
    skip: Annotated[int, Query(ge=0, le=MAX_SKIP)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JobList:
    """This tenant's jobs, most recently changed first (``state`` and ``owner`` filter),
    and how many it has in each state. Failed jobs stay here, with ``last_error``, until
    rerun. A key limited to some owners lists its owner's (naming one when it has
    several)."""
    return mem.jobs.list(state, limit, skip, owner)

@router.get("/jobs/{job_id:path}", response_model=Job)
def get_job(
    job_id: Annotated[str, Path(min_length=1)],
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> Job:
    """One job: its kind, key, state, attempts, ``last_error`` and, once done, its
    ``result`` (what it formed). 404 for an unknown id, or another owner's job for a key
    limited to some owners."""
    return mem.jobs.get(job_id)

@router.post("/jobs/{job_id:path}/rerun", response_model=Job)
def rerun(
    job_id: Annotated[str, Path(min_length=1)],
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> Job:
    """A failed or done job back to pending (attempts reset): 404 for an unknown id, 409
    while it is pending or running."""
    return mem.jobs.rerun(job_id)

@router.post("/episodes/retry-extraction", status_code=202, response_model=ExtractionRetry)
def retry_extraction(
    body: ExtractionRetryIn, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> ExtractionRetry:
    """Episodes whose fact extraction ended with ``status`` (default ``all_dropped``: the
    model proposed facts and every one was dropped) are extracted again, by one formation
    job per session, enqueued here; e.g. after changing the LLM or its prompt."""
    return mem.jobs.retry_extraction(body)

