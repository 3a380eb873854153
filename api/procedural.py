"""Routes for procedural memory: traces in, outcomes later, and skills and cases out."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from graphmem.models import UtcDatetime
from graphmem.procedural.models import (
    CaseDetail,
    OutcomeIn,
    OutcomeReport,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    TraceBatch,
    TraceBody,
    TraceReport,
)
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory

router = APIRouter(prefix="/v1")
Id = Annotated[str, Path(min_length=1)]
When = Annotated[UtcDatetime | None, Query(description="ISO 8601 with an offset")]

@router.post("/traces", status_code=201, response_model=TraceReport)
def post_traces(
    body: TraceBody, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> TraceReport:
    """Store one run (a trace) or a batch ``{"traces": [...]}``. 201 means committed, steps
    included; cases and skills form in the background (``form_trace`` jobs)."""
    traces = body.traces if isinstance(body, TraceBatch) else [body]
    return mem.traces.ingest(traces)

@router.post("/traces/{trace_id:path}/outcome", response_model=OutcomeReport)
def post_outcome(
    trace_id: Id, body: OutcomeIn, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> OutcomeReport:
    """Record how a run ended, later; its cases and the owner's skills form again."""
    return mem.traces.set_outcome(trace_id, body)

@router.post("/skills/search", response_model=SkillSearchResult)
def search(
    req: SkillSearch, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> SkillSearchResult:
    """Hybrid recall (vector + fulltext, fused by RRF) of skills (each with its best
    supporting cases) or cases (each with its skill)."""
    return mem.skills.search(req)

@router.get("/skills/{skill_id}/history", response_model=SkillHistory)
def history(skill_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> SkillHistory:
    """Every version of the skill, with each SUPERSEDES reason and its sources."""
    return mem.skills.history(skill_id)

@router.get("/skills/{skill_id}", response_model=SkillDetail)
def skill(skill_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)],
          limit: Annotated[int, Query(ge=1, le=500)] = 50,
          as_of: When = None, known_at: When = None) -> SkillDetail:
    """A skill version with its support: the cases for it and against it. ``as_of`` (valid
    time) and ``known_at`` (recorded time): the version of its lineage valid then, as
    recorded then."""
    return mem.skills.get(skill_id, limit, as_of, known_at)

@router.get("/cases/{case_id}", response_model=CaseDetail)
def case(case_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> CaseDetail:
    """A case with its skill, the steps it was derived from, and its trace."""
    return mem.cases.get(case_id)

