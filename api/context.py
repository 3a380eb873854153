"""Routes for agents: the packed context to put in a prompt (`POST /v1/context`) and an answer
read from it with cited evidence (`POST /v1/answer`, needs an LLM)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from graphmem.models import AnswerRequest, AnswerResult, ContextRequest, ContextResult
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory
from .problems import PROBLEM
from .replies import model_reply

_PROBLEM = {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}
ANSWER_ERRORS: dict[int | str, dict[str, Any]] = {
    501: {"description": "No LLM is configured; `detail` names the settings to set.",
          "content": _PROBLEM},
    502: {"description": "The LLM gave no usable reply (after retries, malformed replies "
                         "included).", "content": _PROBLEM},
}


router = APIRouter(prefix="/v1")

@router.post("/context", response_model=ContextResult)
def context(req: ContextRequest, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> Response:
    """Messages, episodes and facts valid at ``as_of`` for the question, each with its
    sources and an evidence id (e1, e2, ...) that starts its line in ``context``; hits
    first, cut to ``max_tokens``. With ``trace``, how it was built."""
    return model_reply(mem.context(req))

@router.post("/answer", response_model=AnswerResult, responses=ANSWER_ERRORS)
def answer(
    req: AnswerRequest, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> AnswerResult:
    """An LLM reads the context of ``POST /v1/context`` and answers, citing the evidence
    ids it used (each one an item of the returned context; made-up ids are dropped and
    listed in ``invented_citations``). ``insufficient`` when the context does not hold the
    answer. Needs an LLM (``GRAPHMEM_LLM_BASE_URL``, ``GRAPHMEM_LLM_MODEL``): 501 without
    one. Accounted in ``GET /v1/usage`` as operation ``answer``."""
    result: AnswerResult = mem.answer(req)
    return result

