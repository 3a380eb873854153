"""Routes for facts (observations, profile) and the read-only audit queries."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel

from graphmem import audit
from graphmem.facts.models import Fact, FactHistory, FactWrite, ObservationBatch, ProfileOps
from graphmem.models import UtcDatetime


class AuditInfo(BaseModel):
    name: str
    purpose: str
    params: dict[str, str]
    columns: str
    example: str


class AuditResult(BaseModel):
    name: str
    rows: list[dict[str, Any]]


def router(Tenant: Any, Mem: Any) -> APIRouter:
    r = APIRouter(prefix="/v1")
    When = Annotated[UtcDatetime | None, Query()]
    Text = Annotated[str | None, Query(min_length=1)]
    Name = Annotated[str, Path(min_length=1)]  # `{x:path}`: ids may hold "/" (sent as %2F)

    @r.post("/observations", status_code=201, response_model=list[FactWrite])
    def post_observations(batch: ObservationBatch, tenant: Tenant, mem: Mem) -> list[FactWrite]:
        """Write facts; each goes through the Linker (support, supersede, or place in history).
        The batch is one transaction."""
        return mem.facts.observe(tenant, batch.observations)  # type: ignore[no-any-return]

    @r.get("/observations", response_model=list[Fact])
    def get_observations(
        tenant: Tenant, mem: Mem, owner: Annotated[str, Query(min_length=1)],
        subject: Text = None, type: Text = None, as_of: When = None, known_at: When = None,
        include_history: bool = False,
    ) -> list[Fact]:
        """Current facts; ``as_of`` (valid time) and ``known_at`` (recorded time) look back."""
        return mem.facts.query(  # type: ignore[no-any-return]
            tenant, "observation", owner, subject, type, as_of, known_at, include_history)

    @r.get("/observations/{fact_id:path}/history", response_model=FactHistory)
    def history(fact_id: Name, tenant: Tenant, mem: Mem) -> FactHistory:
        return mem.facts.history(tenant, fact_id)  # type: ignore[no-any-return]

    @r.post("/profile/ops", status_code=201, response_model=list[FactWrite])
    def profile_ops(batch: ProfileOps, tenant: Tenant, mem: Mem) -> list[FactWrite]:
        """ADD / UPDATE / DELETE / NOOP on profile keys; old values are closed, never erased."""
        return mem.facts.profile_ops(tenant, batch.ops)  # type: ignore[no-any-return]

    @r.get("/profile/{owner:path}", response_model=list[Fact])
    def profile(owner: Name, tenant: Tenant, mem: Mem, as_of: When = None,
                known_at: When = None, include_history: bool = False) -> list[Fact]:
        return mem.facts.query(  # type: ignore[no-any-return]
            tenant, "profile", owner, None, None, as_of, known_at, include_history)

    @r.get("/audit", response_model=list[AuditInfo])
    def audits(tenant: Tenant) -> list[AuditInfo]:
        return [AuditInfo(name=q.name, purpose=q.purpose, params=q.params, columns=q.columns,
                          example=q.example) for q in audit.all_queries()]

    @r.get("/audit/{name}", response_model=AuditResult)
    def run_audit(name: str, request: Request, tenant: Tenant, mem: Mem) -> AuditResult:
        """Run a named audit query read-only; its parameters come as query parameters
        (``tenant`` is always the caller's)."""
        raw = dict(request.query_params)
        rows = audit.run(mem.store, tenant, name, raw)
        return AuditResult(name=name, rows=[_jsonable(row) for row in rows])

    return r


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in row.items()}
