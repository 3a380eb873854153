"""Routes for procedural memory: traces in, outcomes later, and skills and cases out."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from graphmem.procedural.models import (
    CaseDetail,
    Outcome,
    OutcomeIn,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    TraceBatch,
    TraceIn,
    TraceReport,
)


class OutcomeReport(BaseModel):
    id: str
    outcome: Outcome
    previous: Outcome | None = None


def router(Tenant: Any, Mem: Any) -> APIRouter:
    r = APIRouter(prefix="/v1")
    Id = Annotated[str, Path(min_length=1)]

    @r.post("/traces", status_code=201, response_model=TraceReport)
    def post_traces(body: TraceBatch | TraceIn, tenant: Tenant, mem: Mem) -> TraceReport:
        """Store one run (a trace) or a batch ``{"traces": [...]}``. 201 means committed, steps
        included; cases and skills form in the background (``form_trace`` jobs)."""
        traces = body.traces if isinstance(body, TraceBatch) else [body]
        return mem.procedural.ingest(tenant, traces)  # type: ignore[no-any-return]

    @r.post("/traces/{trace_id:path}/outcome", response_model=OutcomeReport)
    def post_outcome(trace_id: Id, body: OutcomeIn, tenant: Tenant, mem: Mem) -> OutcomeReport:
        """Record how a run ended, later; its cases and the owner's skills form again."""
        row = mem.procedural.set_outcome(tenant, trace_id, body)
        return OutcomeReport(id=row["id"], outcome=row["outcome"], previous=row["previous"])

    @r.post("/skills/search", response_model=SkillSearchResult)
    def search(req: SkillSearch, tenant: Tenant, mem: Mem) -> SkillSearchResult:
        """Hybrid recall (vector + fulltext, fused by RRF) of skills (each with its best
        supporting cases) or cases (each with its skill)."""
        return mem.procedural.search(tenant, req)  # type: ignore[no-any-return]

    @r.get("/skills/{skill_id}/history", response_model=SkillHistory)
    def history(skill_id: Id, tenant: Tenant, mem: Mem) -> SkillHistory:
        """Every version of the skill, with each SUPERSEDES reason and its sources."""
        return mem.procedural.history(tenant, skill_id)  # type: ignore[no-any-return]

    @r.get("/skills/{skill_id}", response_model=SkillDetail)
    def skill(skill_id: Id, tenant: Tenant, mem: Mem,
              limit: Annotated[int, Query(ge=1, le=500)] = 50) -> SkillDetail:
        """A skill version with its support: the cases for it and against it."""
        return mem.procedural.skill(tenant, skill_id, limit)  # type: ignore[no-any-return]

    @r.get("/cases/{case_id}", response_model=CaseDetail)
    def case(case_id: Id, tenant: Tenant, mem: Mem) -> CaseDetail:
        """A case with its skill, the steps it was derived from, and its trace."""
        return mem.procedural.case(tenant, case_id)  # type: ignore[no-any-return]

    return r
