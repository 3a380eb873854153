"""Routes for messages (store, read by id, session or owner), owners and their export, and
search over an owner's memory."""

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from graphmem.lifecycle import export
from graphmem.lifecycle.export import OwnerExport
from graphmem.models import (
    MAX_SKIP,
    NAME,
    DeleteReport,
    IngestReport,
    Message,
    MessageBatch,
    OwnerInfo,
    SearchRequest,
    SearchResult,
    SessionInfo,
)
from graphmem.tenant_memory import TenantMemory

from .deps import Name, tenant_memory
from .replies import model_reply

router = APIRouter(prefix="/v1")

@router.post("/messages", status_code=201, response_model=IngestReport)
def post_messages(
    batch: MessageBatch, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> IngestReport:
    """Store a batch of messages. 201 means committed in Neo4j; a message id sent twice is
    stored once; a failed batch leaves nothing written."""
    return mem.messages.ingest(batch.messages)

@router.get("/messages/{message_id:path}", response_model=Message)
def get_message(message_id: Name, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> Message:
    """One stored message by id (ids may hold `/`, best sent as `%2F`)."""
    return mem.messages.get(message_id)

@router.get("/owners", response_model=list[OwnerInfo])
def owners(
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
    after: Annotated[str, Query(max_length=200, description="The last owner of the "
                                "previous page (keyset paging); empty for the first")] = "",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[OwnerInfo]:
    """This tenant's owners (anyone with a conversation, a fact or an agent run) by name,
    each with its sessions, messages, latest message time, facts and runs. Page with
    `after` = the last owner of the previous page."""
    return mem.messages.owners(after, limit)

@router.get("/sessions", response_model=list[SessionInfo])
def sessions(
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
    owner: Annotated[str, Query(min_length=1, max_length=200, pattern=NAME)],
    skip: Annotated[int, Query(ge=0, le=MAX_SKIP)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[SessionInfo]:
    """An owner's sessions (conversations), the one with the latest message first: message
    count and the event times of the first and last message, paged."""
    return mem.messages.sessions(owner, skip, limit)

@router.get("/sessions/{session_id:path}/messages", response_model=list[Message])
def session_messages(
    session_id: Name, mem: Annotated[TenantMemory, Depends(tenant_memory)],
    owner: Annotated[str | None, Query(min_length=1)] = None,
    skip: Annotated[int, Query(ge=0, le=MAX_SKIP)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[Message]:
    """A session's messages in event-time order (of one owner if given), paged."""
    return mem.messages.session(session_id, owner, skip, limit)

@router.delete("/owners/{owner:path}", response_model=DeleteReport)
def delete_owner(owner: Name, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> DeleteReport:
    """Forget everything of an owner (this tenant's only); reports what was removed."""
    return mem.messages.forget_owner(owner)

@router.get("/owners/{owner:path}/export", response_model=OwnerExport)
def export_owner(
    owner: Name, mem: Annotated[TenantMemory, Depends(tenant_memory)],
    after: Annotated[str, Query(max_length=2000, description="The `next` of the previous "
                                "page (a cursor); empty for the first")] = "",
    limit: Annotated[int, Query(ge=1, le=export.MAX_LIMIT)] = export.DEFAULT_LIMIT,
) -> Response:
    """Everything stored about an owner, a page at a time: messages, entities, episodes,
    facts (every version), agent runs with their steps, cases, clusters and skills (every
    version), each with its stored properties and its links to the others. Page with
    `after` = the previous page's `next` until `next` is null. 404 when nothing is stored
    for the owner."""
    return model_reply(mem.export(owner, after, limit))

@router.post("/search", response_model=SearchResult)
def search(req: SearchRequest, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> Response:
    """Hybrid recall over an owner's memory: vector and fulltext lists fused by reciprocal
    rank, expanded along the conversation; hits in chronological order with a rendered
    context."""
    return model_reply(mem.search(req))
