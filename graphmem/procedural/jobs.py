"""Job handlers of procedural memory (registered in `graphmem.worker`): ``form_trace`` (payload:
owner, trace_id) and ``form_skills`` (payload: owner). Both are idempotent (delivery is at least
once)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.store.procedural import FORM_SKILLS, FORM_TRACE

if TYPE_CHECKING:
    from graphmem.service import Memory


def form_trace(memory: Memory, job: Any) -> None:
    memory.procedural.form_trace(job.tenant, job.payload["trace_id"])


def form_skills(memory: Memory, job: Any) -> None:
    memory.procedural.form_skills(job.tenant, job.payload["owner"])


HANDLERS = {FORM_TRACE: form_trace, FORM_SKILLS: form_skills}
