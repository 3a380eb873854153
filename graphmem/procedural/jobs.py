"""Job handlers of procedural memory (registered in `graphmem.ops.worker`): ``form_trace`` (payload:
owner, trace_id) and ``form_skills`` (payload: owner). Both are idempotent (delivery is at least
once). Each returns its result, kept on the job (``GET /v1/jobs/{id}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.store.procedural import FORM_SKILLS, FORM_TRACE

if TYPE_CHECKING:
    from graphmem.service import Memory


def form_trace(memory: Memory, job: Any) -> dict[str, Any]:
    """The job's result: cases formed, and what the LLM path did (calls, fallbacks with why)."""
    return memory.procedural.form_trace_report(job.tenant, job.payload["trace_id"])


def form_skills(memory: Memory, job: Any) -> dict[str, Any]:
    """The job's result: the `FormReport` (clusters, skills created/revised, LLM use)."""
    return memory.procedural.form_skills(job.tenant, job.payload["owner"]).model_dump()


HANDLERS = {FORM_TRACE: form_trace, FORM_SKILLS: form_skills}
