"""Routes for facts (observations, profile) and the read-only audit queries."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic_core import to_jsonable_python

from graphmem import audit
from graphmem.facts.models import Fact, FactHistory, FactWrite, ObservationBatch, ProfileOps
from graphmem.models import DATETIME_PATTERN, AuditInfo, AuditResult, UtcDatetime
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    """An audit row as JSON, date-times as every reply writes them (pydantic's form: UTC as
    ``Z``, ``2026-03-01T12:00:00Z``), in lists too."""
    return {k: to_jsonable_python(v) for k, v in row.items()}


_KINDS: dict[str, dict[str, Any]] = {
    "string": {"type": "string", "minLength": 1, "maxLength": audit.MAX_STRING},
    "datetime": {"type": "string", "format": "date-time", "pattern": DATETIME_PATTERN},
    "int": {"type": "integer", "minimum": audit.INT_RANGE[0], "maximum": audit.INT_RANGE[1]},
    "bool": {"type": "boolean"}}


def audit_parameters(queries: list[audit.AuditQuery]) -> list[dict[str, Any]]:
    """The audit queries' parameters as documented query parameters: each name once, with the
    queries that take it (a query missing one it takes answers 422 naming it)."""
    takers: dict[str, list[str]] = {}
    for q in queries:
        for name in q.params:
            takers.setdefault(name, []).append(q.name)
    return [{"name": name, "in": "query", "required": False, "schema": _KINDS[kind],
             "description": "Taken by " + ", ".join(sorted(takers[name])) + " (checked "
             "whichever query runs)"}
            for name, kind in audit.declared().items()]


router = APIRouter(prefix="/v1")
When = Annotated[UtcDatetime | None, Query()]
Text = Annotated[str | None, Query(min_length=1)]
Name = Annotated[str, Path(min_length=1)]  # `{x:path}`: ids may hold "/" (sent as %2F)

@router.post("/observations", status_code=201, response_model=list[FactWrite])
def post_observations(
    batch: ObservationBatch, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> list[FactWrite]:
    """Write facts; each goes through the Linker (support, supersede, or place in history).
    The batch is one transaction."""
    return mem.facts.observe(batch.observations)

@router.get("/observations", response_model=list[Fact])
def get_observations(
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
    owner: Annotated[str, Query(min_length=1)],
    subject: Text = None, type: Text = None, as_of: When = None, known_at: When = None,
    include_history: bool = False,
) -> list[Fact]:
    """Current facts; ``as_of`` (valid time) and ``known_at`` (recorded time) look back."""
    return mem.facts.query(
        owner, subject, type, as_of, known_at, include_history)

@router.get("/observations/{fact_id:path}/history", response_model=FactHistory)
def history(fact_id: Name, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> FactHistory:
    """A fact's whole chain of revisions, in order, with every `SUPERSEDES` reason."""
    return mem.facts.history(fact_id)

@router.post("/profile/ops", status_code=201, response_model=list[FactWrite])
def profile_ops(
    batch: ProfileOps, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> list[FactWrite]:
    """ADD / UPDATE / DELETE / NOOP on profile keys; old values are closed, never erased."""
    return mem.profile.apply(batch.ops)

@router.get("/profile/{owner:path}", response_model=list[Fact])
def profile(owner: Name, mem: Annotated[TenantMemory, Depends(tenant_memory)], as_of: When = None,
            known_at: When = None, include_history: bool = False) -> list[Fact]:
    """An owner's profile: the current value of each key (``as_of`` / ``known_at`` look
    back)."""
    return mem.profile.get(
        owner, as_of, known_at, include_history)

@router.get("/audit", response_model=list[AuditInfo])
def audits(mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> list[AuditInfo]:
    """The named audit queries, with their parameters and columns."""
    return mem.audit.queries()

queries = audit.all_queries()
AuditName = Annotated[str, Path(
    description="One of the named queries (`GET /v1/audit` lists them with their "
    "parameters)", json_schema_extra={"enum": [q.name for q in queries]})]

@router.get("/audit/{name}", response_model=AuditResult,
       openapi_extra={"parameters": audit_parameters(queries)})
def run_audit(
    name: AuditName, request: Request, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> AuditResult:
    """Run a named audit query read-only; its parameters come as query parameters
    (``tenant`` is always the caller's)."""
    result: AuditResult = mem.audit.run(name, dict(request.query_params))
    return AuditResult(name=name, rows=[_jsonable(row) for row in result.rows])
