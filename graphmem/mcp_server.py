"""graphmem as an MCP server (Model Context Protocol, the official ``mcp`` SDK): the tools and
resources an agent uses to remember, recall and check facts, over one tenant's `TenantMemory`.

Two transports, one server definition (`build_server`):

* stdio (`run_stdio`, ``graphmem mcp``): the process is bound to one tenant (``--tenant``);
  the client (Claude Desktop, Cursor) starts it and is trusted like the CLI.
* streamable HTTP (`http_endpoint`): served by the HTTP API at ``/mcp``, stateless, JSON
  replies. Every request carries ``Authorization: Bearer <key>``; `KeyCheck` refuses a missing
  or unknown key with 401 before the MCP layer runs and sends a read-only key to a server
  without the write tools, and each tool call acts for the key's tenant, resolved again from
  that request's header. The SDK's own HTTP refusals (a Host or Origin it does not answer to)
  go out as problem+json (`PlainErrors`).

Errors of graphmem (bad input, unknown id, conflict, Neo4j down) come back as tool errors
(``isError``) whose text names the field at fault, or, reading a resource, as JSON-RPC errors
(`resource_errors`); nothing a caller sends crashes the server.
"""

import contextlib
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ToolAnnotations
from pydantic import Field, ValidationError

from graphmem import __version__, audit
from graphmem.access import Access
from graphmem.config import Settings, caller_of
from graphmem.errors import (
    Forbidden,
    GraphMemError,
    InvalidInput,
    NotFound,
    StoreUnavailable,
)
from graphmem.facts.models import Fact, FactHistory, FactWrite, ObservationList, ProfileOpList
from graphmem.models import (
    AuditResult,
    ContextRequest,
    ContextUnit,
    DeleteReport,
    ForgetReport,
    IngestReport,
    Message,
    MessageList,
    MetadataFilter,
    SearchRequest,
    SearchResult,
    SessionInfo,
    Units,
    UtcDatetime,
)
from graphmem.procedural.models import (
    CaseDetail,
    OutcomeIn,
    OutcomeReport,
    SkillDetail,
    SkillSearch,
    SkillSearchResult,
    TraceBatch,
    TraceList,
    TraceReport,
)
from graphmem.procedural.models import Outcome as RunOutcome
from graphmem.procedural.models import Units as SkillUnits
from graphmem.tenant_memory import TenantMemory
from graphmem.wire import MAX_ERRORS, field_name

if TYPE_CHECKING:
    from graphmem.service import Memory

Ctx = Context[Any, Any]
Scope = Callable[[Ctx], TenantMemory]
"""The caller's memory for one tool call (fixed for stdio; from the request's key over HTTP)."""
Resolve = Callable[[str | None], Access]
"""An ``Authorization`` header value -> what it grants; raises `Unauthorized` (the API's
rule)."""

INSTRUCTIONS = """graphmem is long-term memory on a graph database. Everything belongs to an
`owner` (the person or agent whose memory it is; pick one stable name per user) and messages to a
`session_id` (one conversation). Store conversation turns with add_messages as they happen; they
are kept forever, verbatim. Before answering about the past, call get_context (a ready-to-paste
summary of the relevant turns) or search_memory (the hits themselves). Facts that change over time
(where someone lives, a project's status) go in with record_facts and come back with query_facts:
a newer fact supersedes the older one without deleting it, so as_of (when it was true) and
known_at (what was believed then) can look back. An agent's own runs (its chat messages with
tool calls and results, and how each ended) go in with add_traces; graphmem turns them into
cases and, from the successful ones, skills: before a task, search_skills finds a method that
worked for similar requests, with the runs for and against it. Every timestamp needs an offset,
e.g. 2026-03-12T14:05:00+01:00 or 2026-03-12T13:05:00Z."""

WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
READ = ToolAnnotations(read_only_hint=True)
WRITE_TOOLS = frozenset({"add_messages", "record_facts", "update_profile", "add_traces",
                         "set_outcome", "forget_message", "forget_fact", "forget_session",
                         "forget_owner"})
"""The tools that write or forget: a server for a read-only key does not offer them."""
ANY_ID = ResourceSecurity(exempt_params={"session_id", "owner", "fact_id"})  # ids, not paths
# Ids may hold "/" ({+id}: as it is, or percent-encoded as %2F).

Owner = Annotated[str, Field(min_length=1, description="Whose memory, e.g. 'alice'")]
When = Annotated[UtcDatetime | None, Field(
    description="ISO 8601 with an offset, e.g. 2026-03-12T14:05:00Z")]
METADATA_HINT = ("Only messages whose metadata has, for every key, this value, one of those "
                 "listed, or what operators ask (eq, ne, in, nin, gt, gte, lt, lte, exists), "
                 "e.g. {\"channel\": \"slack\", \"priority\": {\"gte\": 2}}")


def describe(exc: GraphMemError | ValidationError) -> str:
    """The text a client reads for an anticipated error: what went wrong and which field."""
    if isinstance(exc, StoreUnavailable):  # where Neo4j is stays in the server log
        return "store unavailable: Neo4j is unreachable; try again later"
    if isinstance(exc, InvalidInput):
        return f"{exc.title}: {exc.field}: {exc.problem}"
    if isinstance(exc, Forbidden) and exc.field is not None:
        return f"{exc.title}: {exc.field}: {exc.detail}"
    if isinstance(exc, GraphMemError):
        return f"{exc.title}: {exc.detail}"
    found = exc.errors()
    more = f" (and {len(found) - MAX_ERRORS} more errors)" if len(found) > MAX_ERRORS else ""
    return "invalid input: " + "; ".join(
        f"{field_name(e['loc']) if e['loc'] else 'input'}: {e['msg']}"
        for e in found[:MAX_ERRORS]) + more


class _Server(MCPServer[Any]):
    """The SDK's server, with arguments that do not validate described as every other bad
    input is (`describe`: fields named ``messages[0].timestamp``, at most `MAX_ERRORS` of them,
    counted) instead of pydantic's own text, which lists every error with a link to its docs."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Ctx | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(describe(exc.__cause__)) from exc.__cause__
            raise


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """graphmem's own errors and invalid models as `ToolError` (a result with ``isError``);
    anything else stays a crash for the SDK to log (the client reads only the tool's name)."""
    try:
        yield
    except (GraphMemError, ValidationError) as exc:
        raise ToolError(describe(exc)) from None


@contextlib.contextmanager
def resource_errors(ctx: Ctx) -> Iterator[None]:
    """graphmem's own errors reading a resource as JSON-RPC errors whose message names the field
    at fault: an unknown id is the SDK's not found, and a refusal (forbidden) or bad input is
    invalid params too (-32602), with ``data`` giving the URI, the HTTP status the API would
    send and the field; a store that is down stays an internal error (-32603)."""
    try:
        yield
    except NotFound as exc:
        raise ResourceNotFoundError(describe(exc)) from None
    except (GraphMemError, ValidationError) as exc:
        if isinstance(exc, GraphMemError) and exc.status >= 500:
            raise ResourceError(describe(exc)) from None
        data: dict[str, Any] = {"uri": _uri(ctx),
                                "status": 422 if isinstance(exc, ValidationError) else exc.status}
        field = getattr(exc, "field", None)  # InvalidInput's, Forbidden's when one asked
        if field is not None:
            data["field"] = field
        raise MCPError(INVALID_PARAMS, describe(exc), data) from None


def _uri(ctx: Ctx) -> str | None:
    """The URI a resource read asked for."""
    try:
        params = ctx.request_context.params
    except ValueError:  # no request: called outside the protocol
        return None
    uri = (params or {}).get("uri")
    return uri if isinstance(uri, str) else None


def _audit_catalogue() -> str:
    lines = []
    for q in audit.all_queries():
        params = ", ".join(f"{n} ({t})" for n, t in q.params.items() if n != "tenant")
        lines.append(f"- {q.name}({params or 'no parameters'}): {q.purpose}")
    return "\n".join(lines)


def build_server(scope: Scope, *, read_only: bool = False) -> MCPServer[Any]:
    """The MCP server: tools and resources over the memory ``scope`` gives each call; for a
    read-only key (``read_only``), without the tools that write (`WRITE_TOOLS`), so the agent is
    offered only what it may call and a write tool is unknown to it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server: MCPServer[Any] = _Server("graphmem", version=__version__,
                                       instructions=INSTRUCTIONS)
    root.handlers[:], root.level = handlers, level  # the SDK's basicConfig: logging is ours

    @server.tool(annotations=WRITE)
    def add_messages(messages: MessageList, ctx: Ctx) -> IngestReport:
        """Store conversation turns (at most 1000 per call), verbatim and forever. Each needs
        owner, session_id, speaker, text and timestamp (ISO 8601 with an offset); role, id and
        metadata are optional. Sending the same turn again stores it once; a batch is written
        whole or not at all. Returns the message ids and how many were new."""
        with tool_errors():
            return scope(ctx).messages.ingest(messages)

    @server.tool(annotations=READ)
    def search_memory(
        query: str, owner: Owner, ctx: Ctx,
        k: Annotated[int, Field(description="How many best hits to expand (1-200)")] = 10,
        session_id: Annotated[str | None, Field(description="Only this session")] = None,
        time_from: When = None, time_to: When = None,
        units: Annotated[Units, Field(description="What to recall")] = "messages",
        max_messages: Annotated[int | None, Field(description="Budget of messages returned")]
        = None,
        metadata: Annotated[MetadataFilter | None, Field(description=METADATA_HINT)] = None,
    ) -> SearchResult:
        """Recall what was said: hybrid search (meaning and keywords) over an owner's stored
        messages, each hit expanded with its neighbouring turns. Returns the hits in
        chronological order (id, speaker, text, timestamp, session_id, score) and `context`, the
        same turns rendered for a prompt. Use time_from/time_to (event time) to narrow."""
        with tool_errors():
            req = SearchRequest.model_validate({
                "query": query, "owner": owner, "k": k, "session_id": session_id,
                "time_from": time_from, "time_to": time_to, "units": units,
                "max_messages": max_messages, "metadata": metadata})
            return scope(ctx).search(req)

    @server.tool(annotations=READ)
    def get_context(
        query: str, owner: Owner, ctx: Ctx,
        session_id: Annotated[str | None, Field(description="Only this session")] = None,
        as_of: When = None,
        max_tokens: Annotated[int, Field(description="Budget of the text (1-32000)")] = 2000,
        units: Annotated[list[ContextUnit] | None, Field(
            description="What may enter: message, episode, fact (the default: all three) and "
            "skill (the best method learned from the owner's runs for a task request)")] = None,
        metadata: Annotated[MetadataFilter | None, Field(
            description=METADATA_HINT + "; messages only (units default to message)")] = None,
    ) -> str:
        """The memory relevant to a question, as text ready to put in a prompt: the facts valid
        at as_of (default now), then episodes, then the relevant conversation turns with
        speakers and dates ("yesterday [2023-05-07]" resolved); with units including skill, the
        best skill for the task first. Every line starts with an evidence id such as [e2]. Call
        it before answering anything about the owner's past."""
        with tool_errors():
            req = ContextRequest.model_validate({
                "query": query, "owner": owner, "session_id": session_id, "as_of": as_of,
                "max_tokens": max_tokens, "metadata": metadata,
                **({"units": units} if units is not None else {})})
            return scope(ctx).context(req).context

    @server.tool(annotations=READ)
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

    @server.tool(annotations=READ)
    def get_session_messages(
        session_id: str, ctx: Ctx, owner: str | None = None,
        skip: Annotated[int, Field(ge=0, le=100_000)] = 0,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> list[Message]:
        """The messages of one session (conversation) in time order, paged by skip/limit."""
        with tool_errors():
            return scope(ctx).messages.session(session_id, owner, skip, limit)

    @server.tool(annotations=WRITE)
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

    @server.tool(annotations=READ)
    def query_facts(
        owner: Owner, ctx: Ctx, subject: str | None = None, type: str | None = None,
        as_of: When = None, known_at: When = None, include_history: bool = False,
    ) -> list[Fact]:
        """The owner's facts, current by default. as_of: what was true at that time (valid
        time). known_at: what graphmem believed at that time (recorded time). include_history:
        superseded facts too. Filter by subject and/or type."""
        with tool_errors():
            return scope(ctx).facts.query(owner, subject, type, as_of, known_at, include_history)

    @server.tool(annotations=READ)
    def fact_history(fact_id: str, ctx: Ctx) -> FactHistory:
        """A fact's whole chain of versions in order, with why and on what evidence each one
        superseded the previous. An unknown id is an error."""
        with tool_errors():
            return scope(ctx).facts.history(fact_id)

    @server.tool(annotations=READ)
    def get_profile(owner: Owner, ctx: Ctx, as_of: When = None, known_at: When = None,
                    include_history: bool = False) -> list[Fact]:
        """The owner's profile (one value per key, e.g. name, city, employer), now or as of a
        time; include_history adds earlier values."""
        with tool_errors():
            return scope(ctx).profile.get(owner, as_of, known_at, include_history)

    @server.tool(annotations=WRITE)
    def update_profile(ops: ProfileOpList, ctx: Ctx) -> list[FactWrite]:
        """Change profile keys: each {op: ADD|UPDATE|DELETE|NOOP, owner, key, value, explicit}
        (+ valid_from, sources). Old values are closed, never erased."""
        with tool_errors():
            return scope(ctx).profile.apply(ops)

    @server.tool(annotations=WRITE)
    def add_traces(traces: TraceList, ctx: Ctx) -> TraceReport:
        """Store runs (traces) of an agent, at most 100 per call: each {owner, started_at,
        messages, outcome} plus optional id, agent, session_id, task, system, score, detail,
        conditions. messages are the run's messages as the agent produced them: OpenAI chat
        messages (assistant tool_calls, tool results with tool_call_id) or Responses API items
        (function_call, function_call_output), Anthropic messages (tool_use and tool_result
        content blocks) or Gemini contents (parts with functionCall and functionResponse);
        system is a system prompt sent apart from them. outcome is success, failure, partial
        or unknown. The same run sent again is stored once; a batch is written whole or not at
        all. Cases and skills form from the runs in the background. Returns the
        trace ids."""
        with tool_errors():
            batch = TraceBatch.model_validate({"traces": traces})
            return scope(ctx).traces.ingest(batch.traces)

    @server.tool(annotations=WRITE)
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

    @server.tool(annotations=READ)
    def search_skills(
        query: str, owner: Owner, ctx: Ctx,
        units: Annotated[SkillUnits, Field(description="skills (methods) or cases (runs)")]
        = "skills",
        k: Annotated[int, Field(description="How many (1-100)")] = 3,
        cases_per_skill: Annotated[int, Field(description="Supporting runs per skill (0-20)")]
        = 2,
        as_of: When = None,
    ) -> SkillSearchResult:
        """Methods learned from the owner's earlier runs (any customer's) that fit a request
        (e.g. the task a user just asked for): each skill with its ordered steps (tools with
        typed slots such as reservation_id: reservation id, never another customer's values;
        which ones change state), the checks its successful runs made before each write
        (preconditions), what failed runs of its kind did differently (counter_evidence, with
        counts), how often it succeeded and failed, its best supporting runs, and why it came
        up (why: similarity to the requests it served and to each run shown, the request's
        words that name its writes, each run's outcome). `text` has it all compactly, as the
        context gives it. A skill is evidence under the conditions observed, not a guarantee.
        units=cases returns single runs instead."""
        with tool_errors():
            req = SkillSearch.model_validate({
                "query": query, "owner": owner, "units": units, "k": k,
                "cases_per_skill": cases_per_skill, "as_of": as_of})
            return scope(ctx).skills.search(req)

    @server.tool(annotations=READ)
    def get_skill(
        skill_id: str, ctx: Ctx, as_of: When = None,
        limit: Annotated[int, Field(ge=1, le=500, description="Runs listed per side")] = 20,
    ) -> SkillDetail:
        """A skill with its evidence: the runs that support it and the failed runs against it.
        as_of: the version of the skill valid then (skills are revised, never overwritten)."""
        with tool_errors():
            return scope(ctx).skills.get(skill_id, limit, as_of)

    @server.tool(annotations=READ)
    def get_case(case_id: str, ctx: Ctx) -> CaseDetail:
        """One case (a task within a run): its request, actions, outcome and quality, its skill,
        and the steps of the run it was taken from."""
        with tool_errors():
            return scope(ctx).cases.get(case_id)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def forget_message(message_id: str, ctx: Ctx) -> ForgetReport:
        """Permanently delete one message (find its id with search_memory) and what was made
        only from it (facts resting only on it; its episode, formed again from the rest of the
        conversation). Cannot be undone; only call it when the user asks for what they said to
        be forgotten. Returns what was removed."""
        with tool_errors():
            return scope(ctx).messages.forget(message_id)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def forget_fact(fact_id: str, ctx: Ctx) -> ForgetReport:
        """Permanently delete one fact (an observation or profile value, id from query_facts or
        get_profile) and the facts resting only on it; the values it replaced stay closed.
        Cannot be undone; only call it when the user asks for it to be forgotten. To record
        that a fact changed, use record_facts or update_profile instead."""
        with tool_errors():
            return scope(ctx).facts.forget(fact_id)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def forget_session(owner: Owner, session_id: str, ctx: Ctx) -> ForgetReport:
        """Permanently delete one session (conversation) of this owner: its messages and what
        was made only from them (episodes, facts resting only on them). Cannot be undone; only
        call it when the user asks for that conversation to be forgotten. Returns what was
        removed."""
        with tool_errors():
            return scope(ctx).messages.forget_session(owner, session_id)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def forget_owner(owner: Owner, ctx: Ctx) -> DeleteReport:
        """Permanently delete EVERYTHING stored for this owner: messages, facts, profile,
        episodes, runs and skills. Cannot be undone; only call it when the user asks to be
        forgotten. Returns how much was removed."""
        with tool_errors():
            return scope(ctx).messages.forget_owner(owner)

    @server.tool(annotations=READ, description=(
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

    if read_only:
        for name in WRITE_TOOLS:
            server.remove_tool(name)
    return server


def _jsonable(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in row.items()}


# --- stdio ------------------------------------------------------------------------------------
def run_stdio(settings: Settings, access: Access) -> None:
    """Serve MCP on stdin/stdout for ``access`` (a tenant, maybe some owners, maybe read only)
    until the client closes the pipe."""
    from graphmem.service import Memory

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout: the protocol only
    with contextlib.redirect_stdout(sys.stderr):
        memory = Memory.open(settings)
    try:
        scoped = memory.for_tenant(access.tenant, access, caller="mcp-stdio")
        server = build_server(lambda _: scoped, read_only=access.read_only)
        server.run("stdio")
    finally:
        memory.close()


# --- streamable HTTP --------------------------------------------------------------------------
def _authorization(ctx: Ctx) -> str | None:
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return headers.get("authorization") if headers is not None else None


async def _send_problem(send: Any, status: int, detail: str,
                        headers: list[tuple[bytes, bytes]] | None = None, **extra: Any) -> None:
    """An RFC 9457 problem, as the API sends every error (``graphmem.api.problems``)."""
    body = json.dumps({"type": "about:blank", "title": HTTPStatus(status).phrase.lower(),
                       "status": status, "detail": detail, **extra}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class KeyCheck:
    """Pure ASGI wrapper: a request without a valid key gets 401 problem+json before MCP runs;
    a read-only key's request goes to ``read_only_app`` (a server without the write tools),
    any other to ``app``."""

    def __init__(self, app: Any, read_only_app: Any, resolve: Resolve) -> None:
        self.app = app
        self.read_only_app = read_only_app
        self.resolve = resolve

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        app = self.app
        if scope["type"] == "http":
            values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
            try:
                if len(values) > 1:
                    raise InvalidInput("Authorization", "send one Authorization header")
                access = self.resolve(values[0].decode("latin-1") if values else None)
            except GraphMemError as exc:
                await _send_problem(send, 401, exc.detail, [(b"www-authenticate", b"Bearer")])
                return
            if access.read_only:
                app = self.read_only_app
        await app(scope, receive, send)


REFUSED_HEADER = re.compile(r"Invalid ([A-Za-z-]+) header")
"""The SDK's plain-text refusal of a request header (Host, Origin, Content-Type)."""
WHY_REFUSED = {
    "Host": " (DNS rebinding protection: a server on a loopback address answers to loopback "
            "hosts only)",
    "Origin": " (DNS rebinding protection: a server on a loopback address answers to loopback "
              "origins only)",
    "Content-Type": "; send application/json",
}


class PlainErrors:
    """Pure ASGI wrapper: an error the SDK's HTTP transport sends as plain text (or with no
    body), such as its DNS rebinding protection's 421 for a Host and 403 for an Origin it does
    not answer to, goes out as problem+json naming the header (``field``); its other headers
    (e.g. ``Allow``) are kept. JSON-RPC errors (``application/json``) pass unchanged."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] | None = None
        text = b""

        async def rewrite(message: dict[str, Any]) -> None:
            nonlocal held, text
            if message["type"] == "http.response.start" and message["status"] >= 400:
                headers = dict(message.get("headers", []))
                if not headers.get(b"content-type", b"").startswith(b"application/json"):
                    held = message
                    return
            if held is not None and message["type"] == "http.response.body":
                text += message.get("body", b"")
                if not message.get("more_body"):
                    await self._problem(scope, held, text.decode("utf-8", "replace"), send)
                return
            await send(message)

        await self.app(scope, receive, rewrite)

    @staticmethod
    async def _problem(scope: dict[str, Any], start: dict[str, Any], text: str,
                       send: Any) -> None:
        status: int = start["status"]
        kept = [(k, v) for k, v in start.get("headers", [])
                if k.lower() not in (b"content-type", b"content-length")]
        refused = REFUSED_HEADER.fullmatch(text.strip())
        if refused is None:
            await _send_problem(send, status, text.strip() or HTTPStatus(status).phrase, kept)
            return
        name = refused[1]
        values = [v.decode("latin-1") for k, v in scope.get("headers", [])
                  if k == name.lower().encode()]
        if not values:
            detail = f"no {name} header was sent"
        else:
            detail = f"this server does not accept the {name} header {values[0]!r}"
        detail += WHY_REFUSED.get(name, "")
        await _send_problem(send, status, detail, kept, field=name)


def http_endpoint(
    memory: Callable[[], "Memory"], resolve: Resolve, settings: Settings,
) -> tuple[Any, Callable[[], contextlib.AbstractAsyncContextManager[None]]]:
    """(ASGI app, lifespan) of MCP over streamable HTTP, for the API to route ``/mcp`` to.
    ``memory()`` gives the `Memory` (opened by the API), ``resolve`` what the key grants. The
    lifespan must run while the app serves (it holds the MCP task groups). Two servers, one
    without the write tools for read-only keys: the tools a server lists are its own."""

    def scoped(ctx: Ctx) -> TenantMemory:
        header = _authorization(ctx)
        access = resolve(header)
        return memory().for_tenant(access.tenant, access, caller_of(header))

    def manager(read_only: bool) -> StreamableHTTPSessionManager:
        server = build_server(scoped, read_only=read_only)
        # On a loopback host the SDK adds DNS rebinding protection (Host and Origin checked).
        app = server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            max_request_body_size=settings.max_request_bytes, host=settings.host)
        del app  # built for its session manager; the API routes /mcp to the handler itself
        return server.session_manager

    writing, reading = manager(read_only=False), manager(read_only=True)

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with writing.run(), reading.run():
            yield

    return KeyCheck(PlainErrors(StreamableHTTPASGIApp(writing)),
                    PlainErrors(StreamableHTTPASGIApp(reading)), resolve), lifespan
