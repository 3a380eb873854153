"""Routes for forgetting one thing: a message, a session, the messages a filter chooses, a
trace or a fact (see `graphmem.lifecycle.forget`)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from graphmem.lifecycle.forget import ForgetReport
from graphmem.models import NAME, ForgetMessages
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory

router = APIRouter(prefix="/v1")
Id = Annotated[str, Path(min_length=1)]  # `{x:path}`: ids may hold "/" (sent as %2F)

@router.delete("/messages/{message_id:path}", response_model=ForgetReport)
def forget_message(
    message_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> ForgetReport:
    """Forget one message: its sentence units, the turn windows and the episode holding it
    (formed again from the session's other messages by a job committed with the deletion),
    and the facts resting only on it. One transaction; an audit record keeps the id's hash
    and the counts, never the content. Forgetting it again answers ``already_forgotten``;
    an id never stored (for this tenant) is a 404."""
    return mem.messages.forget(message_id)

@router.delete("/sessions/{session_id:path}", response_model=ForgetReport)
def forget_session(
    session_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)],
    owner: Annotated[str, Query(min_length=1, max_length=200, pattern=NAME,
                                description="The session's owner (session ids are per "
                                "owner)")],
) -> ForgetReport:
    """Forget one session (a whole conversation) of an owner: every message with its
    sentence units, the turn windows and episodes made from them, the entities only they
    mention, and the facts resting only on them. One transaction, audited like the others;
    a session of more than `max_forget_session_messages` messages (10,000) is a 413 with
    nothing deleted. Forgetting it again answers ``already_forgotten``; a session never
    stored is a 404."""
    return mem.messages.forget_session(owner, session_id)

@router.post("/messages/forget", response_model=ForgetReport)
def forget_messages(
    body: ForgetMessages, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> ForgetReport:
    """Forget the messages of an owner that a filter chooses (`metadata` as in search,
    `session_id`, `time_from`/`time_to`; every filter given must match, at least one is
    needed) as each would be forgotten alone: sentence units, turn windows and episodes,
    the entities only they mention, the facts resting only on them; their sessions are
    formed again from what is left. One transaction, audited (the filter's hash and the
    counts); more than `max_forget_matching_messages` (1,000) matching is a 413 naming the
    filter, with nothing deleted. A filter matching nothing removes nothing."""
    return mem.messages.forget_matching(body)

@router.delete("/traces/{trace_id:path}", response_model=ForgetReport)
def forget_trace(
    trace_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> ForgetReport:
    """Forget one trace: its steps and cases, and the skill versions resting only on them;
    the owner's skills form again from the other cases."""
    return mem.traces.forget(trace_id)

@router.delete("/facts/{fact_id:path}", response_model=ForgetReport)
def forget_fact(fact_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> ForgetReport:
    """Forget one fact (an observation or a profile value) and the facts resting only on
    it. The facts it superseded stay closed: history is not rewritten."""
    return mem.facts.forget(fact_id)

