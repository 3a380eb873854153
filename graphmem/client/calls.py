"""Every API operation the client knows, as data: `ENDPOINTS` (HTTP method, OpenAPI path, whether
a retry is safe) and one builder per operation that turns typed arguments into a `Call`. The
sync and async clients only send calls; nothing here does I/O.

A retry is safe (``retry``) for reads and for writes that are idempotent by design: a message
batch (a message id sent twice is stored once, and a message without an id gets one derived from
its content) and a trace batch (the same). Other writes are sent once: a connection that never
opened is retried, an answer lost on the way is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from itertools import islice
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter, ValidationError

from graphmem.client.errors import from_validation
from graphmem.operations import NOT_COVERED as NOT_COVERED
from graphmem.operations import OPERATIONS
from graphmem.wire import (
    MAX_BATCH,
    MAX_OBSERVATIONS,
    MAX_TRACES,
    AnswerRequest,
    AnswerResult,
    AuditInfo,
    AuditResult,
    CaseDetail,
    ChunkResult,
    ChunkSearch,
    ContextRequest,
    ContextResult,
    DeleteReport,
    Document,
    DocumentDetail,
    DocumentIn,
    DocumentWrite,
    ExtractionRetry,
    ExtractionRetryIn,
    Fact,
    FactHistory,
    FactWrite,
    ForgetMessages,
    ForgetReport,
    IngestReport,
    Job,
    JobList,
    JobState,
    Message,
    MessageBatch,
    ObservationBatch,
    Outcome,
    OutcomeIn,
    OutcomeReport,
    OwnerExport,
    OwnerInfo,
    ProfileOps,
    SearchRequest,
    SearchResult,
    SessionInfo,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    Topic,
    TopicDetail,
    TraceBatch,
    TraceReport,
    UsageReport,
)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Query = Mapping[str, str | int | float | bool | datetime | date | None]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    """The path as the OpenAPI document names it, e.g. ``/v1/messages/{message_id}``."""
    retry: bool
    """Safe to send again when the answer was lost or was a 503."""


ENDPOINTS: dict[str, Endpoint] = {
    op.name: Endpoint(op.method, op.path, op.retry) for op in OPERATIONS}
"""Every operation a client sends, from the table of operations (`graphmem.operations`)."""


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request to send and how to read its answer."""

    name: str
    url: str
    parse: Callable[[Any], T]
    params: dict[str, str] = field(default_factory=dict)
    json: Any = None

    @property
    def endpoint(self) -> Endpoint:
        return ENDPOINTS[self.name]


def _call(name: str, reply: Any, *, path: Mapping[str, str] | None = None,
          params: Query | None = None, body: BaseModel | None = None) -> Call[Any]:
    url = ENDPOINTS[name].path
    for key, value in (path or {}).items():
        url = url.replace("{" + key + "}", quote(value, safe=""))  # ids may hold "/"
    json = body.model_dump(mode="json", exclude_unset=True) if body is not None else None
    return Call(name, url, _adapter(reply).validate_python, _query(params or {}), json)


@cache
def _adapter(reply: Any) -> TypeAdapter[Any]:
    return TypeAdapter(reply)


def _query(params: Query) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, datetime | date):
            out[key] = value.isoformat()
        else:
            out[key] = str(value)
    return out


def model(cls: type[M], value: Any) -> M:
    """A request model from a model or a mapping, validated here: bad input raises
    `InvalidInputError` naming the field before anything is sent."""
    if isinstance(value, cls):
        return value
    try:
        return cls.model_validate(value)
    except ValidationError as exc:
        raise from_validation(exc) from None


def _items(values: Iterable[Any], bound: int) -> list[Any]:
    """At most ``bound + 1`` of ``values`` as sendable items: one past the request's bound is
    enough for its length check to refuse the list before any item is validated or dumped."""
    return [v.model_dump(exclude_unset=True) if isinstance(v, BaseModel) else v
            for v in islice(values, bound + 1)]


# --- messages and search ---------------------------------------------------------------------

def add_messages(messages: Iterable[Any]) -> Call[IngestReport]:
    batch = model(MessageBatch, {"messages": _items(messages, MAX_BATCH)})
    return _call("add_messages", IngestReport, body=batch)


def get_message(message_id: str) -> Call[Message]:
    return _call("get_message", Message, path={"message_id": message_id})


def owners(after: str, limit: int) -> Call[list[OwnerInfo]]:
    return _call("owners", list[OwnerInfo], params={"after": after, "limit": limit})


def sessions(owner: str, skip: int, limit: int) -> Call[list[SessionInfo]]:
    return _call("sessions", list[SessionInfo], params={"owner": owner, "skip": skip,
                                                        "limit": limit})


def session_messages(session_id: str, owner: str | None, skip: int,
                     limit: int) -> Call[list[Message]]:
    return _call("session_messages", list[Message], path={"session_id": session_id},
                 params={"owner": owner, "skip": skip, "limit": limit})


def delete_owner(owner: str) -> Call[DeleteReport]:
    return _call("delete_owner", DeleteReport, path={"owner": owner})


def export_owner(owner: str, after: str, limit: int) -> Call[OwnerExport]:
    return _call("export_owner", OwnerExport, path={"owner": owner},
                 params={"after": after, "limit": limit})


def _request(cls: type[M], query: str | M, owner: str | None, options: Mapping[str, Any]) -> M:
    """A query request from a model, or from the query, owner and the model's other fields; an
    option that is None is left unset (the server's default applies)."""
    options = {key: value for key, value in options.items() if value is not None}
    if isinstance(query, cls):
        if owner is not None or options:
            raise TypeError(f"pass either a {cls.__name__} or query, owner and options")
        return query
    return model(cls, {"query": query, "owner": owner, **options})


def search(query: str | SearchRequest, owner: str | None,
           options: Mapping[str, Any]) -> Call[SearchResult]:
    return _call("search", SearchResult, body=_request(SearchRequest, query, owner, options))


def context(query: str | ContextRequest, owner: str | None,
            options: Mapping[str, Any]) -> Call[ContextResult]:
    req = _request(ContextRequest, query, owner, options)
    return _call("context", ContextResult, body=req)


def answer(query: str | AnswerRequest, owner: str | None,
           options: Mapping[str, Any]) -> Call[AnswerResult]:
    return _call("answer", AnswerResult, body=_request(AnswerRequest, query, owner, options))


# --- forgetting ------------------------------------------------------------------------------

def forget_message(message_id: str) -> Call[ForgetReport]:
    return _call("forget_message", ForgetReport, path={"message_id": message_id})


def forget_session(session_id: str, owner: str) -> Call[ForgetReport]:
    return _call("forget_session", ForgetReport, path={"session_id": session_id},
                 params={"owner": owner})


def forget_messages(owner: str | ForgetMessages,
                    filters: Mapping[str, Any]) -> Call[ForgetReport]:
    req = owner if isinstance(owner, ForgetMessages) else ForgetMessages.model_validate(
        {"owner": owner, **filters})
    return _call("forget_messages", ForgetReport, body=req)


def forget_trace(trace_id: str) -> Call[ForgetReport]:
    return _call("forget_trace", ForgetReport, path={"trace_id": trace_id})


def forget_document(document_id: str) -> Call[ForgetReport]:
    return _call("forget_document", ForgetReport, path={"document_id": document_id})


def forget_fact(fact_id: str) -> Call[ForgetReport]:
    return _call("forget_fact", ForgetReport, path={"fact_id": fact_id})


# --- facts and audit -------------------------------------------------------------------------

def add_observations(observations: Iterable[Any]) -> Call[list[FactWrite]]:
    batch = model(ObservationBatch, {"observations": _items(observations, MAX_OBSERVATIONS)})
    return _call("add_observations", list[FactWrite], body=batch)


def observations(owner: str, subject: str | None, type: str | None, as_of: datetime | None,
                 known_at: datetime | None, include_history: bool) -> Call[list[Fact]]:
    return _call("observations", list[Fact], params={
        "owner": owner, "subject": subject, "type": type, "as_of": as_of,
        "known_at": known_at, "include_history": include_history or None})


def observation_history(fact_id: str) -> Call[FactHistory]:
    return _call("observation_history", FactHistory, path={"fact_id": fact_id})


def profile_ops(ops: Iterable[Any]) -> Call[list[FactWrite]]:
    body = model(ProfileOps, {"ops": _items(ops, MAX_OBSERVATIONS)})
    return _call("profile_ops", list[FactWrite], body=body)


def profile(owner: str, as_of: datetime | None, known_at: datetime | None,
            include_history: bool) -> Call[list[Fact]]:
    return _call("profile", list[Fact], path={"owner": owner}, params={
        "as_of": as_of, "known_at": known_at, "include_history": include_history or None})


def audits() -> Call[list[AuditInfo]]:
    return _call("audits", list[AuditInfo])


def audit(name: str, params: Query) -> Call[AuditResult]:
    return _call("audit", AuditResult, path={"name": name}, params=params)


# --- jobs and usage --------------------------------------------------------------------------

def jobs(state: JobState | None, skip: int, limit: int,
         owner: str | None = None) -> Call[JobList]:
    return _call("jobs", JobList, params={"state": state, "owner": owner, "skip": skip,
                                          "limit": limit})


def job(job_id: str) -> Call[Job]:
    return _call("job", Job, path={"job_id": job_id})


def rerun_job(job_id: str) -> Call[Job]:
    return _call("rerun_job", Job, path={"job_id": job_id})


def retry_extraction(status: str, owner: str | None) -> Call[ExtractionRetry]:
    body = model(ExtractionRetryIn, {"status": status, "owner": owner})
    return _call("retry_extraction", ExtractionRetry, body=body)


def usage(since: date | None, until: date | None) -> Call[UsageReport]:
    return _call("usage", UsageReport, params={"since": since, "until": until})


# --- procedural memory -----------------------------------------------------------------------

def add_traces(traces: Iterable[Any]) -> Call[TraceReport]:
    batch = model(TraceBatch, {"traces": _items(traces, MAX_TRACES)})
    return _call("add_traces", TraceReport, body=batch)


def set_outcome(trace_id: str, outcome: Outcome, score: float | None, detail: str | None,
                feedback: str | None) -> Call[OutcomeReport]:
    fields = {"outcome": outcome, "score": score, "detail": detail, "feedback": feedback}
    body = model(OutcomeIn, {k: v for k, v in fields.items() if v is not None})
    return _call("set_outcome", OutcomeReport, path={"trace_id": trace_id}, body=body)


def search_skills(query: str | SkillSearch, owner: str | None,
                  options: Mapping[str, Any]) -> Call[SkillSearchResult]:
    req = _request(SkillSearch, query, owner, options)
    return _call("search_skills", SkillSearchResult, body=req)


def skill(skill_id: str, limit: int) -> Call[SkillDetail]:
    return _call("skill", SkillDetail, path={"skill_id": skill_id}, params={"limit": limit})


def skill_history(skill_id: str) -> Call[SkillHistory]:
    return _call("skill_history", SkillHistory, path={"skill_id": skill_id})


def case(case_id: str) -> Call[CaseDetail]:
    return _call("case", CaseDetail, path={"case_id": case_id})


# --- documents -------------------------------------------------------------------------------

def add_document(document: Any) -> Call[DocumentWrite]:
    return _call("add_document", DocumentWrite, body=model(DocumentIn, document))


def documents(owner: str, after: str, limit: int, history: bool, key: str | None,
              as_of: datetime | str | None) -> Call[list[Document]]:
    return _call("documents", list[Document], params={
        "owner": owner, "after": after, "limit": limit, "history": history, "key": key,
        "as_of": as_of})


def document(document_id: str, with_text: bool) -> Call[DocumentDetail]:
    return _call("document", DocumentDetail, path={"document_id": document_id},
                 params={"with_text": with_text})


def search_documents(query: str | ChunkSearch, owner: str | None,
                     options: Mapping[str, Any]) -> Call[ChunkResult]:
    return _call("search_documents", ChunkResult,
                 body=_request(ChunkSearch, query, owner, options))


def topics(owner: str) -> Call[list[Topic]]:
    return _call("topics", list[Topic], params={"owner": owner})


def topic(topic_id: str) -> Call[TopicDetail]:
    return _call("topic", TopicDetail, path={"topic_id": topic_id})


# --- probes ----------------------------------------------------------------------------------

def health() -> Call[dict[str, Any]]:
    return _call("health", dict[str, Any])


def ready() -> Call[dict[str, Any]]:
    return _call("ready", dict[str, Any])
