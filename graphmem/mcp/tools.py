"""The MCP tools and resources (`build_server`): what an agent may call, over one tenant's
`TenantMemory` that ``scope`` gives each call. The tools are declared in the table of operations
(`graphmem.operations.TOOLS`): a small core set by default, every tool with ``tools="all"``;
a server for a read-only key leaves out the tools that write."""


import inspect
import json
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer, ResourceSecurity
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

from graphmem import __version__, audit
from graphmem.errors import InvalidInput
from graphmem.facts.models import Fact, FactHistory, FactWrite, ObservationList, ProfileOpList
from graphmem.mcp.errors import Ctx, Server, resource_errors, tool_errors
from graphmem.models import (
    MAX_BATCH,
    AuditResult,
    ContextRequest,
    ContextUnit,
    DeleteReport,
    ForgetReport,
    Message,
    MessageBatch,
    MetadataFilter,
    SearchRequest,
    SessionInfo,
    Units,
    UtcDatetime,
    utc_datetime,
)
from graphmem.operations import TOOLS, WRITE_TOOLS
from graphmem.procedural.models import (
    MAX_TRACES,
    CaseDetail,
    OutcomeIn,
    OutcomeReport,
    SkillDetail,
    SkillSearch,
    TraceBatch,
)
from graphmem.procedural.models import Outcome as RunOutcome
from graphmem.procedural.models import Units as SkillUnits
from graphmem.tenant_memory import TenantMemory

Scope = Callable[[Ctx], TenantMemory]
"""The caller's memory for one tool call (fixed for stdio; from the request's key over HTTP)."""

INSTRUCTIONS = """graphmem is long-term memory. Everything belongs to an `owner` (one stable name
per user) and messages to a `session_id` (one conversation). Store each turn with add_messages as it
happens. Before answering about the past, call get_context and cite its [e1]-style ids. Facts that
change (where someone lives) come from query_facts: current by default, as_of looks back. Store your
own runs with add_traces; before a task, search_skills finds a method that worked. forget deletes
what the user asks to be forgotten. Times need an offset, e.g. 2026-03-12T13:05:00Z."""
USE_MEMORY = INSTRUCTIONS + """

A turn of your loop: 1. add_messages with the user's message. 2. get_context with the question
(and units including "skill" when the user asks for a task). 3. Answer from what it returns, citing
ids; say when memory has nothing. 4. add_messages with your answer. After a task, add_traces with
its messages and outcome."""


WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
READ = ToolAnnotations(read_only_hint=True)
FORGET = ToolAnnotations(destructive_hint=True, idempotent_hint=True)
ToolSet = Literal["core", "all"]
"""Which tools a server offers: the core set (`graphmem.operations.CORE_TOOLS`) or all."""
ANY_ID = ResourceSecurity(exempt_params={"session_id", "owner", "fact_id"})  # ids, not paths
# Ids may hold "/" ({+id}: as it is, or percent-encoded as %2F).

Owner = Annotated[str, Field(min_length=1, description="Whose memory, e.g. 'alice'")]
Time = Annotated[str | None, Field(description="ISO 8601 with an offset")]
"""A time a core tool takes: checked as every API time is (`_time`), declared briefly."""
When = Annotated[UtcDatetime | None, Field(
    description="ISO 8601 with an offset, e.g. 2026-03-12T14:05:00Z")]
METADATA_HINT = ("Only messages whose metadata has, for every key, this value, one of those "
                 "listed, or what operators ask (eq, ne, in, nin, gt, gte, lt, lte, exists), "
                 "e.g. {\"channel\": \"slack\", \"priority\": {\"gte\": 2}}")



def compact(value: Any) -> Any:
    """A result as an agent reads it: JSON without nulls, empty lists or empty objects, and
    scores rounded to 3 decimals."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        items = ((k, compact(v)) for k, v in value.items())
        return {k: v for k, v in items if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [compact(v) for v in value]
    return round(value, 3) if isinstance(value, float) else value


def _time(name: str, value: str | None) -> datetime | None:
    """A `Time` argument as the API reads a date-time; InvalidInput naming it otherwise."""
    try:
        return None if value is None else utc_datetime(value)
    except ValueError as exc:
        raise InvalidInput(name, str(exc)) from None


def reply(value: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """A model (or the dict of one) as the compact object a tool returns."""
    out: dict[str, Any] = compact(value)
    return out


def _tool(server: MCPServer[Any], annotations: ToolAnnotations,
          description: str | None = None) -> Callable[[Any], Any]:
    """``server.tool`` with the function's docstring dedented as its description."""
    def register(fn: Any) -> Any:
        text = description if description is not None else inspect.cleandoc(fn.__doc__ or "")
        return server.tool(annotations=annotations, description=text)(fn)
    return register


def _audit_catalogue() -> str:
    lines = []
    for q in audit.all_queries():
        params = ", ".join(f"{n} ({t})" for n, t in q.params.items() if n != "tenant")
        lines.append(f"- {q.name}({params or 'no parameters'}): {q.purpose}")
    return "\n".join(lines)


def build_server(scope: Scope, *, read_only: bool = False,
                 tools: ToolSet = "core") -> MCPServer[Any]:
    """The MCP server: tools and resources over the memory ``scope`` gives each call. It
    offers the core tools (six: few enough that their descriptions stay small in an agent's
    context) or ``tools="all"``; for a read-only key (``read_only``), none that writes
    (`WRITE_TOOLS`), so the agent is offered only what it may call and a write tool is unknown
    to it. Results are compact JSON (`compact`)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server: MCPServer[Any] = Server("graphmem", version=__version__,
                                       instructions=INSTRUCTIONS)
    root.handlers[:], root.level = handlers, level  # the SDK's basicConfig: logging is ours

    @_tool(server, WRITE)
    def add_messages(messages: Annotated[list[dict[str, Any]], Field(
            min_length=1, max_length=MAX_BATCH, description="Turns: {owner, session_id, "
            "speaker, text, timestamp}, optional id, role, metadata")], ctx: Ctx,
    ) -> dict[str, Any]:
        """Store conversation turns, verbatim, kept forever. A turn sent again is stored
        once. Returns their ids."""
        with tool_errors():
            batch = MessageBatch.model_validate({"messages": messages})
            return reply(scope(ctx).messages.ingest(batch.messages))

    @_tool(server, READ)
    def search_memory(
        query: str, owner: Owner, ctx: Ctx,
        k: Annotated[int, Field(description="How many hits (1-200)")] = 10,
        session_id: Annotated[str | None, Field(description="Only this session")] = None,
        time_from: When = None, time_to: When = None,
        units: Annotated[Units, Field(description="What to recall")] = "messages",
        max_messages: Annotated[int | None, Field(description="Budget of messages returned")]
        = None,
        metadata: Annotated[MetadataFilter | None, Field(description=METADATA_HINT)] = None,
    ) -> dict[str, Any]:
        """Recall what was said: hybrid search (meaning and keywords) over an owner's stored
        messages. Returns k hits, best first (id, speaker, text, timestamp, session_id, score),
        each with the turns around it in `window`. Use time_from/time_to (event time) to
        narrow."""
        with tool_errors():
            req = SearchRequest.model_validate({
                "query": query, "owner": owner, "k": k, "session_id": session_id,
                "time_from": time_from, "time_to": time_to, "units": units,
                "max_messages": max_messages, "metadata": metadata})
            found = scope(ctx).search(req).model_dump(mode="json", exclude={"context"})
            return reply(found)  # the hits only: no second, rendered copy of them

    @_tool(server, READ)
    def get_context(
        query: str, owner: str, ctx: Ctx, session_id: str | None = None,
        as_of: Time = None, max_tokens: int = 2000,
        units: Annotated[list[ContextUnit] | None, Field(
            description="Default: message, episode, fact; add skill for a task, chunk for "
            "documents")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(
            description="Messages whose metadata matches, e.g. {\"channel\": \"slack\"}")]
        = None,
    ) -> str:
        """The memory relevant to a question, as text for a prompt: facts valid at as_of
        (default now), episodes, then conversation turns with dates. Each line starts with an
        evidence id such as [e2]. Call it before answering about the owner's past."""
        with tool_errors():
            req = ContextRequest.model_validate({
                "query": query, "owner": owner, "session_id": session_id, "as_of": as_of,
                "max_tokens": max_tokens, "metadata": metadata,
                **({"units": units} if units is not None else {})})
            return scope(ctx).context(req).context

    @_tool(server, READ)
    def list_sessions(
        owner: Owner, ctx: Ctx,
        skip: Annotated[int, Field(ge=0, le=100_000)] = 0,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> list[SessionInfo]:
        """The owner's sessions (conversations), the most recent first: each session_id with its
        message count and the times of its first and last message. Read one with
        get_session_messages."""
        with tool_errors():
            return scope(ctx).messages.sessions(owner, skip, limit)

    @_tool(server, READ)
    def get_session_messages(
        session_id: str, ctx: Ctx, owner: str | None = None,
        skip: Annotated[int, Field(ge=0, le=100_000)] = 0,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> list[Message]:
        """The messages of one session (conversation) in time order, paged by skip/limit."""
        with tool_errors():
            return scope(ctx).messages.session(session_id, owner, skip, limit)

    @_tool(server, WRITE)
    def record_facts(observations: ObservationList, ctx: Ctx) -> list[FactWrite]:
        """Record facts that may change: each {owner, subject, type, content, explicit} plus
        optional valid_from (when it became true; default: its source message's time, else now),
        valid_to, sources (message ids it rests on; required when explicit is false), reason.
        A different content for the same owner+subject+type supersedes the current one (kept in
        history); the same content only adds support. Types such as hobby or likes hold several
        values. Returns per fact its id, its action (created, supported, noop) and the ids of the
        facts it superseded."""
        with tool_errors():
            return scope(ctx).facts.observe(observations)

    @_tool(server, READ)
    def query_facts(
        owner: str, ctx: Ctx, subject: str | None = None, type: str | None = None,
        as_of: Time = None, known_at: Time = None, include_history: bool = False,
    ) -> list[dict[str, Any]]:
        """The owner's facts about a subject, current by default. as_of: true then (valid
        time); known_at: believed then (recorded time); include_history: superseded too."""
        with tool_errors():
            return [compact(f) for f in scope(ctx).facts.query(
                owner, subject, type, _time("as_of", as_of), _time("known_at", known_at),
                include_history)]

    @_tool(server, READ)
    def fact_history(fact_id: str, ctx: Ctx) -> FactHistory:
        """A fact's whole chain of versions in order, with why and on what evidence each one
        superseded the previous. An unknown id is an error."""
        with tool_errors():
            return scope(ctx).facts.history(fact_id)

    @_tool(server, READ)
    def get_profile(owner: Owner, ctx: Ctx, as_of: When = None, known_at: When = None,
                    include_history: bool = False) -> list[Fact]:
        """The owner's profile (one value per key, e.g. name, city, employer), now or as of a
        time; include_history adds earlier values."""
        with tool_errors():
            return scope(ctx).profile.get(owner, as_of, known_at, include_history)

    @_tool(server, WRITE)
    def update_profile(ops: ProfileOpList, ctx: Ctx) -> list[FactWrite]:
        """Change profile keys: each {op: ADD|UPDATE|DELETE|NOOP, owner, key, value, explicit}
        (+ valid_from, sources). Old values are closed, never erased."""
        with tool_errors():
            return scope(ctx).profile.apply(ops)

    @_tool(server, WRITE)
    def add_traces(traces: Annotated[list[dict[str, Any]], Field(
            min_length=1, max_length=MAX_TRACES)], ctx: Ctx) -> dict[str, Any]:
        """Store your runs (up to 100): each {owner, started_at, messages, outcome}, messages
        as your chat API produced them (OpenAI, Anthropic or Gemini, tool calls included),
        outcome success, failure, partial or unknown. Skills form from them in the background."""
        with tool_errors():
            batch = TraceBatch.model_validate({"traces": traces})
            return reply(scope(ctx).traces.ingest(batch.traces))

    @_tool(server, WRITE)
    def set_outcome(
        trace_id: str, outcome: RunOutcome, ctx: Ctx,
        score: Annotated[float | None, Field(description="e.g. a reward")] = None,
        detail: Annotated[str | None, Field(description="What happened")] = None,
    ) -> OutcomeReport:
        """Record how a stored run ended, when it is known only later (success, failure,
        partial, unknown); the skills it counts for or against are formed again. Returns the
        outcome now and before."""
        with tool_errors():
            body = OutcomeIn.model_validate({"outcome": outcome, "score": score,
                                             "detail": detail})
            return scope(ctx).traces.set_outcome(trace_id, body)

    @_tool(server, READ)
    def search_skills(
        query: str, owner: str, ctx: Ctx,
        units: Annotated[SkillUnits, Field(description="or cases: single runs")] = "skills",
        k: int = 3, cases_per_skill: int = 2, as_of: Time = None,
    ) -> dict[str, Any]:
        """Methods learned from earlier runs that fit a request: each skill's steps (with
        slots), the checks made before writes, failures against it, its outcomes and why it
        fits. Evidence, not a guarantee."""
        with tool_errors():
            req = SkillSearch.model_validate({
                "query": query, "owner": owner, "units": units, "k": k,
                "cases_per_skill": cases_per_skill, "as_of": as_of})
            return reply(scope(ctx).skills.search(req))

    @_tool(server, READ)
    def get_skill(
        skill_id: str, ctx: Ctx, as_of: When = None,
        limit: Annotated[int, Field(ge=1, le=500, description="Runs listed per side")] = 20,
    ) -> SkillDetail:
        """A skill with its evidence: the runs that support it and the failed runs against it.
        as_of: the version of the skill valid then (skills are revised, never overwritten)."""
        with tool_errors():
            return scope(ctx).skills.get(skill_id, limit, as_of)

    @_tool(server, READ)
    def search_documents(query: str, owner: str, ctx: Ctx, k: int = 5,
                         documents: list[str] | None = None, as_of: Time = None) -> dict[str, Any]:
        """Passages of the owner's documents (manuals, papers, notes, web pages, PDFs) that
        answer a question, best first, each cited by document, version, section path and
        character offsets. documents: only these document keys; as_of: the versions valid
        then."""
        from graphmem.documents.models import ChunkSearch

        with tool_errors():
            req = ChunkSearch.model_validate({"query": query, "owner": owner, "k": k,
                                              "documents": documents, "as_of": as_of})
            return reply(scope(ctx).documents.search(req))

    @_tool(server, READ)
    def get_case(case_id: str, ctx: Ctx) -> CaseDetail:
        """One case (a task within a run): its request, actions, outcome and quality, its skill,
        and the steps of the run it was taken from."""
        with tool_errors():
            return scope(ctx).cases.get(case_id)

    @_tool(server, FORGET)
    def forget_message(message_id: str, ctx: Ctx) -> ForgetReport:
        """Permanently delete one message (find its id with search_memory) and what was made
        only from it (facts resting only on it; its episode, formed again from the rest of the
        conversation). Cannot be undone; only call it when the user asks for what they said to
        be forgotten. Returns what was removed."""
        with tool_errors():
            return scope(ctx).messages.forget(message_id)

    @_tool(server, FORGET)
    def forget_fact(fact_id: str, ctx: Ctx) -> ForgetReport:
        """Permanently delete one fact (an observation or profile value, id from query_facts or
        get_profile) and the facts resting only on it; the values it replaced stay closed.
        Cannot be undone; only call it when the user asks for it to be forgotten. To record
        that a fact changed, use record_facts or update_profile instead."""
        with tool_errors():
            return scope(ctx).facts.forget(fact_id)

    @_tool(server, FORGET)
    def forget_session(owner: Owner, session_id: str, ctx: Ctx) -> ForgetReport:
        """Permanently delete one session (conversation) of this owner: its messages and what
        was made only from them (episodes, facts resting only on them). Cannot be undone; only
        call it when the user asks for that conversation to be forgotten. Returns what was
        removed."""
        with tool_errors():
            return scope(ctx).messages.forget_session(owner, session_id)

    @_tool(server, FORGET)
    def forget_owner(owner: Owner, ctx: Ctx) -> DeleteReport:
        """Permanently delete EVERYTHING stored for this owner: messages, facts, profile,
        episodes, runs and skills. Cannot be undone; only call it when the user asks to be
        forgotten. Returns how much was removed."""
        with tool_errors():
            return scope(ctx).messages.forget_owner(owner)

    @_tool(server, FORGET)
    def forget(
        what: Literal["message", "fact", "session"],
        id: Annotated[str, Field(description="A session: its session_id")], ctx: Ctx,
        owner: Annotated[str | None, Field(description="A session's owner")] = None,
    ) -> dict[str, Any]:
        """Permanently delete a message, a fact or a session, and what rested only on it.
        Only when the user asks for it to be forgotten."""
        with tool_errors():
            memory = scope(ctx)
            if what == "message":
                return reply(memory.messages.forget(id))
            if what == "fact":
                return reply(memory.facts.forget(id))
            if owner is None:
                raise InvalidInput("owner", "forgetting a session needs its owner")
            return reply(memory.messages.forget_session(owner, id))

    @_tool(server, READ, description=(
        "Run a named, read-only audit query over the stored facts and skills (e.g. why a fact "
        "changed, what was true at a time, integrity checks that must return no rows). `params` "
        "maps each parameter to a string (datetimes with an offset). The queries:\n"
        + _audit_catalogue()))
    def run_audit_query(name: str, ctx: Ctx,
                        params: dict[str, str] | None = None) -> AuditResult:
        with tool_errors():
            result = scope(ctx).audit.run(name, params or {})
            return AuditResult(name=name, rows=[_jsonable(r) for r in result.rows])

    @server.resource("graphmem://sessions/{+session_id}/messages{?owner}",
                     mime_type="application/json", security=ANY_ID)
    def session_resource(session_id: str, ctx: Ctx, owner: str | None = None) -> str:
        """The first 1000 messages of a session, in time order (JSON)."""
        with resource_errors(ctx):
            messages = scope(ctx).messages.session(session_id, owner, 0, 1000)
            return json.dumps([m.model_dump(mode="json") for m in messages])

    @server.resource("graphmem://facts/{+fact_id}/history", mime_type="application/json",
                     security=ANY_ID)
    def fact_history_resource(fact_id: str, ctx: Ctx) -> str:
        """A fact's chain of versions with every SUPERSEDES reason (JSON)."""
        with resource_errors(ctx):
            return scope(ctx).facts.history(fact_id).model_dump_json()

    @server.prompt(name="use_memory", description="How to use graphmem's memory in a turn")
    def use_memory() -> str:
        return USE_MEMORY

    for tool in TOOLS:
        if (tools == "core" and not tool.core) or (read_only and tool.name in WRITE_TOOLS):
            server.remove_tool(tool.name)
    return server


def _jsonable(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: to_jsonable_python(v) for k, v in row.items()}  # date-times as the API's: Z

