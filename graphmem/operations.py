"""The table of operations: every operation of graphmem's API declared once, with its HTTP
method and path, its area (the OpenAPI tag), a summary of its own, its request and reply types,
whether a retry is safe, whether it writes (a read-only key may not call it), and the MCP tool
that offers it to agents (and whether that tool is in the small default set).

The surfaces come from it or are held to it by tests (tests/unit/test_operations.py): the
OpenAPI document takes its tags and summaries from here (`api/openapi.py`); the HTTP routes,
the MCP tools, the client's calls (`graphmem.client.calls.ENDPOINTS` is made from it), both
Python clients and the TypeScript client's request list must each offer exactly these. Adding
an operation starts with a row here; a surface that lacks it fails its test.

Pure data over the wire models (`graphmem.wire`): the client imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from graphmem import wire

Method = Literal["GET", "POST", "DELETE"]
Tag = Literal["messages", "search", "facts", "procedural memory", "documents", "forgetting",
              "export", "jobs", "audit", "operations"]
TAGS: dict[str, str] = {
    "messages": "Conversations as sent: stored verbatim, read back by id, session or owner.",
    "search": "Recall: hybrid search, a packed context for a prompt, a cited answer.",
    "facts": "Observations and profile facts, bitemporal: valid time and recorded time.",
    "procedural memory": "Agent runs, their outcomes, and the skills and cases formed from them.",
    "documents": "Documents in versions, their sections and chunks, search over them, and "
                 "the topic tree they are filed under.",
    "forgetting": "Forgetting, audited: one message, fact, run or session, or by a filter.",
    "export": "Everything stored about an owner, a page at a time.",
    "jobs": "Background formation: its jobs, reruns, and the LLM's usage.",
    "audit": "Named read-only audit queries over the fact and skill history.",
    "operations": "Health and readiness.",
}
"""Each area, as the OpenAPI document describes its tag."""


@dataclass(frozen=True)
class Operation:
    name: str
    """The client method (both Python clients) and the key of `ENDPOINTS`."""
    method: Method
    path: str
    """As the OpenAPI document names it, e.g. ``/v1/messages/{message_id}``."""
    tag: Tag
    summary: str
    """Unique among the operations."""
    request: Any = None
    """The body's model (None: no body)."""
    reply: Any = None
    """The answer's type (None: not a JSON model)."""
    retry: bool = True
    """Safe to send again when the answer was lost or was a 503."""
    writes: bool = False
    """Writes or forgets: refused to a read-only key."""


def _op(name: str, method: Method, path: str, tag: Tag, summary: str, request: Any = None,
        reply: Any = None, *, retry: bool = True, writes: bool = False) -> Operation:
    return Operation(name, method, path, tag, summary, request, reply, retry, writes)


W = wire
OPERATIONS: tuple[Operation, ...] = (
    _op("add_messages", "POST", "/v1/messages", "messages", "Store messages",
        W.MessageBatch, W.IngestReport, writes=True),
    _op("get_message", "GET", "/v1/messages/{message_id}", "messages", "Read a message",
        None, W.Message),
    _op("owners", "GET", "/v1/owners", "messages", "List owners", None, list[W.OwnerInfo]),
    _op("sessions", "GET", "/v1/sessions", "messages", "List an owner's sessions",
        None, list[W.SessionInfo]),
    _op("session_messages", "GET", "/v1/sessions/{session_id}/messages", "messages",
        "Read a session's messages", None, list[W.Message]),
    _op("search", "POST", "/v1/search", "search", "Search memory", W.SearchRequest,
        W.SearchResult),
    _op("context", "POST", "/v1/context", "search", "Build the context for a prompt",
        W.ContextRequest, W.ContextResult),
    _op("answer", "POST", "/v1/answer", "search", "Answer a question with citations",
        W.AnswerRequest, W.AnswerResult, retry=False),
    _op("add_observations", "POST", "/v1/observations", "facts", "Record observations",
        W.ObservationBatch, list[W.FactWrite], retry=False, writes=True),
    _op("observations", "GET", "/v1/observations", "facts", "Query facts", None,
        list[W.Fact]),
    _op("observation_history", "GET", "/v1/observations/{fact_id}/history", "facts",
        "A fact's history", None, W.FactHistory),
    _op("profile_ops", "POST", "/v1/profile/ops", "facts", "Change profile facts",
        W.ProfileOps, list[W.FactWrite], retry=False, writes=True),
    _op("profile", "GET", "/v1/profile/{owner}", "facts", "Read an owner's profile", None,
        list[W.Fact]),
    _op("add_traces", "POST", "/v1/traces", "procedural memory", "Store agent runs",
        W.TraceBatch, W.TraceReport, writes=True),
    _op("set_outcome", "POST", "/v1/traces/{trace_id}/outcome", "procedural memory",
        "Record a run's outcome", W.OutcomeIn, W.OutcomeReport, retry=False, writes=True),
    _op("search_skills", "POST", "/v1/skills/search", "procedural memory", "Search skills",
        W.SkillSearch, W.SkillSearchResult),
    _op("skill", "GET", "/v1/skills/{skill_id}", "procedural memory", "Read a skill", None,
        W.SkillDetail),
    _op("skill_history", "GET", "/v1/skills/{skill_id}/history", "procedural memory",
        "A skill's versions", None, W.SkillHistory),
    _op("case", "GET", "/v1/cases/{case_id}", "procedural memory", "Read a case", None,
        W.CaseDetail),
    _op("add_document", "POST", "/v1/documents", "documents", "Store a document",
        W.DocumentIn, W.DocumentWrite, writes=True),
    _op("documents", "GET", "/v1/documents", "documents", "List documents", None,
        list[W.Document]),
    _op("document", "GET", "/v1/documents/{document_id}", "documents", "Read a document",
        None, W.DocumentDetail),
    _op("search_documents", "POST", "/v1/documents/search", "documents", "Search documents",
        W.ChunkSearch, W.ChunkResult),
    _op("topics", "GET", "/v1/topics", "documents", "List an owner's topics", None,
        list[W.Topic]),
    _op("topic", "GET", "/v1/topics/{topic_id}", "documents", "Read a topic", None,
        W.TopicDetail),
    _op("forget_message", "DELETE", "/v1/messages/{message_id}", "forgetting",
        "Forget a message", None, W.ForgetReport, writes=True),
    _op("forget_session", "DELETE", "/v1/sessions/{session_id}", "forgetting",
        "Forget a session", None, W.ForgetReport, writes=True),
    _op("forget_messages", "POST", "/v1/messages/forget", "forgetting",
        "Forget messages by a filter", W.ForgetMessages, W.ForgetReport, writes=True),
    _op("forget_trace", "DELETE", "/v1/traces/{trace_id}", "forgetting", "Forget a run",
        None, W.ForgetReport, writes=True),
    _op("forget_document", "DELETE", "/v1/documents/{document_id}", "forgetting",
        "Forget a document", None, W.ForgetReport, writes=True),
    _op("forget_fact", "DELETE", "/v1/facts/{fact_id}", "forgetting", "Forget a fact", None,
        W.ForgetReport, writes=True),
    _op("delete_owner", "DELETE", "/v1/owners/{owner}", "forgetting", "Forget an owner",
        None, W.DeleteReport, writes=True),
    _op("export_owner", "GET", "/v1/owners/{owner}/export", "export", "Export an owner",
        None, W.OwnerExport),
    _op("jobs", "GET", "/v1/jobs", "jobs", "List jobs", None, W.JobList),
    _op("job", "GET", "/v1/jobs/{job_id}", "jobs", "Read a job", None, W.Job),
    _op("rerun_job", "POST", "/v1/jobs/{job_id}/rerun", "jobs", "Rerun a job", None, W.Job,
        retry=False, writes=True),
    _op("retry_extraction", "POST", "/v1/episodes/retry-extraction", "jobs",
        "Retry fact extraction", W.ExtractionRetryIn, W.ExtractionRetry, writes=True),
    _op("usage", "GET", "/v1/usage", "jobs", "LLM usage", None, W.UsageReport),
    _op("audits", "GET", "/v1/audit", "audit", "List audit queries", None,
        list[W.AuditInfo]),
    _op("audit", "GET", "/v1/audit/{name}", "audit", "Run an audit query", None,
        W.AuditResult),
    _op("health", "GET", "/healthz", "operations", "Health"),
    _op("ready", "GET", "/readyz", "operations", "Readiness"),
)
BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}
NOT_COVERED = {("GET", "/metrics"), ("GET", "/browser/style.grass"),
               ("GET", "/browser/guide.html")}
"""Served, but no operation of a client: Prometheus' scrape and Neo4j Browser's assets."""


@dataclass(frozen=True)
class Tool:
    """An MCP tool: the operations it performs (most tools one; ``forget`` picks by kind)."""

    name: str
    operations: tuple[str, ...]
    core: bool = False
    """Offered by default; the others with ``--tools all`` (or ``GRAPHMEM_MCP_TOOLS=all``)."""

    @property
    def writes(self) -> bool:
        return any(BY_NAME[o].writes for o in self.operations)


TOOLS: tuple[Tool, ...] = (
    Tool("add_messages", ("add_messages",), core=True),
    Tool("get_context", ("context",), core=True),
    Tool("query_facts", ("observations",), core=True),
    Tool("add_traces", ("add_traces",), core=True),
    Tool("search_skills", ("search_skills",), core=True),
    Tool("forget", ("forget_message", "forget_fact", "forget_session"), core=True),
    Tool("search_memory", ("search",)),
    Tool("list_sessions", ("sessions",)),
    Tool("get_session_messages", ("session_messages",)),
    Tool("record_facts", ("add_observations",)),
    Tool("fact_history", ("observation_history",)),
    Tool("get_profile", ("profile",)),
    Tool("update_profile", ("profile_ops",)),
    Tool("set_outcome", ("set_outcome",)),
    Tool("get_skill", ("skill",)),
    Tool("get_case", ("case",)),
    Tool("search_documents", ("search_documents",)),
    Tool("forget_message", ("forget_message",)),
    Tool("forget_fact", ("forget_fact",)),
    Tool("forget_session", ("forget_session",)),
    Tool("forget_owner", ("delete_owner",)),
    Tool("run_audit_query", ("audit",)),
)
CORE_TOOLS = frozenset(t.name for t in TOOLS if t.core)
WRITE_TOOLS = frozenset(t.name for t in TOOLS if t.writes)
"""The tools that write or forget: a server for a read-only key does not offer them."""
