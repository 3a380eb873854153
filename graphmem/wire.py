"""The HTTP wire in one module: every request and response body of the API, as the pydantic
models the server validates with, for the server, the MCP tools and the Python client alike.

It imports pydantic and the standard library only (no Neo4j driver, embedding model, FastAPI or
OpenAI client), so a client installs light. The models live where the library uses them
(`graphmem.models`, `graphmem.facts.models`, `graphmem.procedural.models`,
`graphmem.llm.usage`); this module re-exports them, and a test checks that every body schema of
the OpenAPI document is one of them. `Problem` is the error body (RFC 9457) of every 4xx/5xx.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphmem.documents.models import (
    ChunkHit,
    ChunkResult,
    ChunkSearch,
    Document,
    DocumentDetail,
    DocumentIn,
    DocumentWrite,
    Section,
    Topic,
    TopicDetail,
    TopicMember,
)
from graphmem.facts.models import (
    MAX_OBSERVATIONS,
    Cardinality,
    Fact,
    FactHistory,
    FactWrite,
    ObservationBatch,
    ObservationIn,
    ProfileOp,
    ProfileOpKind,
    ProfileOps,
    Supersession,
)
from graphmem.lifecycle.export import ExportKind, ExportLink, ExportRecord, OwnerExport
from graphmem.llm.usage import UsageDay, UsageReport, UsageSums, UsageTotal
from graphmem.models import (
    MAX_BATCH,
    AnswerRequest,
    AnswerResult,
    AuditInfo,
    AuditResult,
    Citation,
    ContextItem,
    ContextRequest,
    ContextResult,
    ContextTrace,
    ContextUnit,
    DeleteReport,
    EpisodeHit,
    Expand,
    ExtractionRetry,
    ExtractionRetryIn,
    FactHit,
    ForgetKind,
    ForgetMessages,
    ForgetReport,
    Hit,
    IngestReport,
    ItemRef,
    Job,
    JobList,
    JobState,
    Message,
    MessageBatch,
    MessageIn,
    Method,
    OwnerInfo,
    RetriedEpisode,
    Rule,
    Scalar,
    SearchRequest,
    SearchResult,
    SearchTrace,
    SessionInfo,
    TraceCandidate,
    TraceDecision,
    TraceQuery,
    TraceRound,
    Turn,
    UnitRef,
    Units,
)
from graphmem.procedural.models import (
    MAX_TRACES,
    Action,
    Case,
    CaseDetail,
    CaseMatch,
    CounterEvidence,
    Outcome,
    OutcomeIn,
    OutcomeReport,
    Precondition,
    Recommendation,
    Skill,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    SkillStep,
    SkillSupersession,
    Step,
    StepKind,
    TraceBatch,
    TraceIn,
    TraceReport,
)


class ProblemItem(BaseModel):
    """One wrong input: ``field`` as ``messages[3].timestamp``, and what is wrong with it."""

    field: str
    problem: str


MAX_ERRORS = 20
"""Errors a problem lists; ``error_count`` counts them all."""


def field_name(loc: Sequence[int | str]) -> str:
    """('messages', 0, 'timestamp') -> 'messages[0].timestamp': how every error names a field,
    over HTTP, MCP and in the client."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


class Problem(BaseModel):
    """An error body (RFC 9457, ``application/problem+json``). ``field`` names the input at
    fault (for 400, 413, 422), ``errors`` lists each wrong input."""

    model_config = ConfigDict(extra="allow")  # RFC 9457 lets a problem carry more members

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    field: str | None = None
    errors: list[ProblemItem] = Field(default_factory=list)
    error_count: int | None = Field(
        default=None, description="How many errors there were; `errors` lists the first 20")


def problem_body(status: int, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    """The members of a problem answer (`Problem`), as every error of the API and of ``/mcp``
    is sent: ``extra`` adds members (``field``, ``errors``, ``error_count``, ...)."""
    return {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}


__all__ = [
    "MAX_BATCH",
    "MAX_ERRORS",
    "MAX_OBSERVATIONS",
    "MAX_TRACES",
    "Action",
    "AnswerRequest",
    "AnswerResult",
    "AuditInfo",
    "AuditResult",
    "Cardinality",
    "Case",
    "CaseDetail",
    "CaseMatch",
    "ChunkHit",
    "ChunkResult",
    "ChunkSearch",
    "Citation",
    "ContextItem",
    "ContextRequest",
    "ContextResult",
    "ContextTrace",
    "ContextUnit",
    "CounterEvidence",
    "DeleteReport",
    "Document",
    "DocumentDetail",
    "DocumentIn",
    "DocumentWrite",
    "EpisodeHit",
    "Expand",
    "ExportKind",
    "ExportLink",
    "ExportRecord",
    "ExtractionRetry",
    "ExtractionRetryIn",
    "Fact",
    "FactHistory",
    "FactHit",
    "FactWrite",
    "ForgetKind",
    "ForgetMessages",
    "ForgetReport",
    "Hit",
    "IngestReport",
    "ItemRef",
    "Job",
    "JobList",
    "JobState",
    "Message",
    "MessageBatch",
    "MessageIn",
    "Method",
    "ObservationBatch",
    "ObservationIn",
    "Outcome",
    "OutcomeIn",
    "OutcomeReport",
    "OwnerExport",
    "OwnerInfo",
    "Precondition",
    "Problem",
    "ProblemItem",
    "ProfileOp",
    "ProfileOpKind",
    "ProfileOps",
    "Recommendation",
    "RetriedEpisode",
    "Rule",
    "Scalar",
    "SearchRequest",
    "SearchResult",
    "SearchTrace",
    "Section",
    "SessionInfo",
    "Skill",
    "SkillDetail",
    "SkillHistory",
    "SkillSearch",
    "SkillSearchResult",
    "SkillStep",
    "SkillSupersession",
    "Step",
    "StepKind",
    "Supersession",
    "Topic",
    "TopicDetail",
    "TopicMember",
    "TraceBatch",
    "TraceCandidate",
    "TraceDecision",
    "TraceIn",
    "TraceQuery",
    "TraceReport",
    "TraceRound",
    "Turn",
    "UnitRef",
    "Units",
    "UsageDay",
    "UsageReport",
    "UsageSums",
    "UsageTotal",
    "field_name",
]
