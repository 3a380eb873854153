"""Job handlers of procedural memory (registered in `graphmem.ops.worker`, which gives them its
`Procedural` and the job's tenant's stores): ``form_trace`` (payload: owner, trace_id) and
``form_skills`` (payload: owner).
Both are idempotent (delivery is at least once). Each returns its result, kept on the job
(``GET /v1/jobs/{id}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphmem.procedural.service import Procedural
    from graphmem.store import TenantStores


def form_trace(procedural: Procedural, stores: TenantStores, job: Any) -> dict[str, Any]:
    """The job's result: cases formed, and what the LLM path did (calls, fallbacks with why)."""
    return procedural.form_trace_report(stores, job.payload["trace_id"])


def form_skills(procedural: Procedural, stores: TenantStores, job: Any) -> dict[str, Any]:
    """The job's result: the `FormReport` (clusters, skills created/revised, LLM use)."""
    return procedural.form_skills(stores, job.payload["owner"]).model_dump()

