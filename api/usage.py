"""Route for LLM token accounting: the caller's usage per day, operation and model."""


from typing import Annotated

from fastapi import APIRouter, Depends

from graphmem.errors import InvalidInput
from graphmem.llm.usage import UsageReport
from graphmem.models import IsoDate
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory

router = APIRouter(prefix="/v1")

@router.get("/usage", response_model=UsageReport)
def llm_usage(mem: Annotated[TenantMemory, Depends(tenant_memory)], since: IsoDate | None = None,
              until: IsoDate | None = None) -> UsageReport:
    """This tenant's LLM calls (formation and extraction) per UTC day, operation and model,
    with tokens, failures, HTTP attempts and latency, and totals per operation. ``since``
    and ``until`` (YYYY-MM-DD, inclusive) bound the days. Empty when no LLM is configured."""
    if since is not None and until is not None and since > until:
        raise InvalidInput("until", f"{until} is before since ({since})")
    report: UsageReport = mem.usage(since, until)
    return report

