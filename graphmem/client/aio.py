"""`AsyncGraphMem`: the asyncio client, the same methods as `GraphMem`, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

import httpx

from graphmem.client import calls
from graphmem.client.base import DEFAULT_TIMEOUT, Retry, httpx_options, no_answer, result
from graphmem.procedural.models import Units as SkillUnits
from graphmem.wire import (
    AnswerRequest,
    AnswerResult,
    AuditInfo,
    AuditResult,
    CaseDetail,
    ChunkResult,
    ChunkSearch,
    ContextRequest,
    ContextResult,
    ContextUnit,
    DeleteReport,
    Document,
    DocumentDetail,
    DocumentIn,
    DocumentWrite,
    Expand,
    ExportRecord,
    ExtractionRetry,
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
    MessageIn,
    Method,
    ObservationIn,
    Outcome,
    OutcomeReport,
    OwnerExport,
    OwnerInfo,
    ProfileOp,
    SearchRequest,
    SearchResult,
    SessionInfo,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    Topic,
    TopicDetail,
    TraceIn,
    TraceReport,
    Units,
    UsageReport,
)

T = TypeVar("T")
Param = str | int | float | bool | datetime | date | None


class AsyncGraphMem:
    """A graphmem server over HTTP, for asyncio::

        async with AsyncGraphMem("http://127.0.0.1:8000", api_key="...") as gm:
            result = await gm.search("where does alice live?", owner="alice", k=5)

    The same arguments, methods, replies and exceptions as `GraphMem` (``base_url`` and
    ``api_key`` default to ``GRAPHMEM_URL`` and ``GRAPHMEM_API_KEY``; with no URL from
    either, a ValueError says what to set).
    """

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float | httpx.Timeout = DEFAULT_TIMEOUT, retries: int = 2,
                 backoff: float = 0.5, max_backoff: float = 8.0,
                 headers: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.retry = Retry(retries, backoff, max_backoff)
        self._http = httpx.AsyncClient(**httpx_options(base_url, api_key, timeout, headers),
                                       transport=transport)

    @property
    def base_url(self) -> str:
        """The server's URL, as requests are sent to it."""
        return str(self._http.base_url)

    async def aclose(self) -> None:
        """Close the connections (leaving ``async with`` does it)."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncGraphMem:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def _run(self, call: calls.Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self._http.request(call.endpoint.method, call.url,
                                                    params=call.params, json=call.json)
            except httpx.TransportError as exc:
                wait = self.retry.delay(call, attempt, exc)
                if wait is None:
                    raise no_answer(exc) from exc
            else:
                wait = self.retry.delay(call, attempt, response)
                if wait is None:
                    return result(call, response)
            await asyncio.sleep(wait)
            attempt += 1

    # --- messages and search -----------------------------------------------------------------

    async def add_messages(self, messages: Iterable[MessageIn | Mapping[str, Any]]
                           ) -> IngestReport:
        """Store a batch; returns once committed. Safe to repeat (ids make it idempotent)."""
        return await self._run(calls.add_messages(messages))

    async def get_message(self, message_id: str) -> Message:
        """One stored message by id (`NotFoundError` when there is none)."""
        return await self._run(calls.get_message(message_id))

    async def owners(self, *, after: str = "", limit: int = 50) -> list[OwnerInfo]:
        """This tenant's owners by name; the next page starts ``after`` the last one."""
        return await self._run(calls.owners(after, limit))

    async def sessions(self, owner: str, *, skip: int = 0,
                 limit: int = 100) -> list[SessionInfo]:
        """``owner``'s sessions (conversations), the one with the latest message first."""
        return await self._run(calls.sessions(owner, skip, limit))

    async def session_messages(self, session_id: str, *, owner: str | None = None,
                               skip: int = 0, limit: int = 100) -> list[Message]:
        """A session's messages in event-time order."""
        return await self._run(calls.session_messages(session_id, owner, skip, limit))

    async def delete_owner(self, owner: str) -> DeleteReport:
        """Forget everything of an owner; reports what was removed."""
        return await self._run(calls.delete_owner(owner))

    async def export_owner(self, owner: str, *, after: str = "",
                     limit: int = 500) -> OwnerExport:
        """A page of everything stored about ``owner``; the next starts ``after`` its ``next``."""
        return await self._run(calls.export_owner(owner, after, limit))

    async def export_all(self, owner: str, *, limit: int = 500) -> AsyncIterator[ExportRecord]:
        """Every record of ``owner``'s export, page after page (one request a page)."""
        after = ""
        while True:
            page = await self.export_owner(owner, after=after, limit=limit)
            for record in page.records:
                yield record
            if page.next is None:
                return
            after = page.next

    async def search(self, query: str | SearchRequest, owner: str | None = None, *,
                     session_id: str | None = None, time_from: datetime | str | None = None,
                     time_to: datetime | str | None = None, k: int | None = None,
                     expand: Expand | Mapping[str, int] | None = None, method: Method | None = None,
                     max_messages: int | None = None,
                     order: Literal["relevance", "time"] | None = None, preset: str | None = None,
                     units: Units | None = None, documents: Sequence[str] | None = None,
                     topic: str | None = None,
                     metadata: Mapping[str, Any] | None = None,
                     as_of: datetime | str | None = None,
                     time_hint: Literal["boost", "restrict", "off"] | None = None,
                     trace: bool | None = None) -> SearchResult:
        """Hybrid recall: ``await search("where does alice live?", owner="alice", k=5)``, or
        ``search(SearchRequest(...))``. The keywords are the fields of `SearchRequest` (the
        API reference describes each): ``k`` hits with the turns around them (``expand``),
        ``session_id``, ``time_from`` / ``time_to`` (event time) and a ``metadata`` filter
        narrow it, ``units`` chooses messages, observations, both, episodes or chunks (passages
        of the owner's documents, in ``chunks``, narrowed by ``documents`` keys, a ``topic``
        and a ``metadata`` of exact values). A keyword left None takes the server's default."""
        return await self._run(calls.search(query, owner, {
            "session_id": session_id, "time_from": time_from, "time_to": time_to, "k": k,
            "expand": expand, "method": method, "max_messages": max_messages, "order": order,
            "preset": preset, "units": units,
            "documents": None if documents is None else list(documents), "topic": topic,
            "metadata": metadata,
            "as_of": as_of, "time_hint": time_hint, "trace": trace}))

    async def context(self, query: str | ContextRequest, owner: str | None = None, *,
                      session_id: str | None = None, as_of: datetime | str | None = None,
                      max_tokens: int | None = None, k: int | None = None,
                      units: Sequence[ContextUnit] | None = None,
                      documents: Sequence[str] | None = None, topic: str | None = None,
                      metadata: Mapping[str, Any] | None = None, method: Method | None = None,
                      preset: str | None = None, trace: bool | None = None) -> ContextResult:
        """The packed context for a question (facts, episodes, messages, each line with an
        evidence id), within ``max_tokens``. The keywords are the fields of `ContextRequest`
        (or pass one): ``as_of`` the question's date, ``k`` best hits per unit, ``units``
        which units may enter (add ``chunk`` for passages of the owner's documents, narrowed by
        ``documents`` keys or a ``topic``). A keyword left None takes the server's default."""
        return await self._run(calls.context(query, owner, {
            "session_id": session_id, "as_of": as_of, "max_tokens": max_tokens, "k": k,
            "units": None if units is None else list(units),
            "documents": None if documents is None else list(documents), "topic": topic,
            "metadata": metadata,
            "method": method, "preset": preset, "trace": trace}))

    async def answer(self, query: str | AnswerRequest, owner: str | None = None, *,
                     session_id: str | None = None, as_of: datetime | str | None = None,
                     max_tokens: int | None = None, k: int | None = None,
                     units: Sequence[ContextUnit] | None = None,
                     documents: Sequence[str] | None = None, topic: str | None = None,
                     metadata: Mapping[str, Any] | None = None, method: Method | None = None,
                     preset: str | None = None, trace: bool | None = None) -> AnswerResult:
        """An answer read from that context by the server's LLM, citing its evidence; the
        keywords are those of `context` (the fields of `AnswerRequest`). Sent once (it costs
        tokens); a server without an LLM answers 501 (`ServerError`)."""
        return await self._run(calls.answer(query, owner, {
            "session_id": session_id, "as_of": as_of, "max_tokens": max_tokens, "k": k,
            "units": None if units is None else list(units),
            "documents": None if documents is None else list(documents), "topic": topic,
            "metadata": metadata,
            "method": method, "preset": preset, "trace": trace}))

    # --- forgetting one thing ----------------------------------------------------------------

    async def forget_message(self, message_id: str) -> ForgetReport:
        """Forget one message and what rests only on it; again: ``already_forgotten``."""
        return await self._run(calls.forget_message(message_id))

    async def forget_session(self, session_id: str, *, owner: str) -> ForgetReport:
        """Forget one session of ``owner`` (every message, and what rests only on them)."""
        return await self._run(calls.forget_session(session_id, owner))

    async def forget_messages(self, owner: str | ForgetMessages, **filters: Any) -> ForgetReport:
        """Forget ``owner``'s messages that the filters choose (``metadata=``, ``session_id=``,
        ``time_from=``, ``time_to=``; at least one) and what rests only on them."""
        return await self._run(calls.forget_messages(owner, filters))

    async def forget_trace(self, trace_id: str) -> ForgetReport:
        """Forget one agent run (a trace): its steps and cases, and the skill versions
        resting only on them; the owner's skills form again from the other cases."""
        return await self._run(calls.forget_trace(trace_id))

    async def forget_document(self, document_id: str) -> ForgetReport:
        """Forget a document: every version of its key, with their sections and chunks
        (audited); again, ``already_forgotten``."""
        return await self._run(calls.forget_document(document_id))

    async def forget_fact(self, fact_id: str) -> ForgetReport:
        """Forget one fact (an observation or a profile value) and the facts resting
        only on it; the facts it superseded stay closed (history is not rewritten)."""
        return await self._run(calls.forget_fact(fact_id))

    # --- facts and audit ---------------------------------------------------------------------

    async def add_observations(self,
                               observations: Iterable[ObservationIn | Mapping[str, Any]]
                               ) -> list[FactWrite]:
        """Write facts (one transaction); each is linked to what it supports,
        supersedes or follows in history, and the reply says which."""
        return await self._run(calls.add_observations(observations))

    async def observations(self, owner: str, *, subject: str | None = None,
                           type: str | None = None, as_of: datetime | None = None,
                           known_at: datetime | None = None,
                           include_history: bool = False) -> list[Fact]:
        """``owner``'s facts valid ``as_of`` (default: now) as known at ``known_at``
        (default: now), of a ``subject`` and ``type`` if given; closed versions too
        with ``include_history``."""
        return await self._run(calls.observations(owner, subject, type, as_of, known_at,
                                            include_history))

    async def observation_history(self, fact_id: str) -> FactHistory:
        """A fact's whole chain of revisions, in order, with every supersession's
        reason."""
        return await self._run(calls.observation_history(fact_id))

    async def profile_ops(self, ops: Iterable[ProfileOp | Mapping[str, Any]]
                          ) -> list[FactWrite]:
        """ADD / UPDATE / DELETE / NOOP on profile keys; old values are closed, never
        erased."""
        return await self._run(calls.profile_ops(ops))

    async def profile(self, owner: str, *, as_of: datetime | None = None,
                      known_at: datetime | None = None,
                      include_history: bool = False) -> list[Fact]:
        """``owner``'s profile: the value of each key ``as_of`` / ``known_at`` (default:
        now); closed values too with ``include_history``."""
        return await self._run(calls.profile(owner, as_of, known_at, include_history))

    async def audits(self) -> list[AuditInfo]:
        """The named audit queries, with their parameters and columns (run one with
        `audit`)."""
        return await self._run(calls.audits())

    async def audit(self, name: str, /, **params: Param) -> AuditResult:
        """Run a named audit query; its parameters as keywords."""
        return await self._run(calls.audit(name, params))

    # --- jobs and usage ----------------------------------------------------------------------

    async def jobs(self, *, state: JobState | None = None, owner: str | None = None,
                   skip: int = 0, limit: int = 100) -> JobList:
        """Background jobs, most recently changed first (``owner``: that owner's only)."""
        return await self._run(calls.jobs(state, skip, limit, owner))

    async def job(self, job_id: str) -> Job:
        """One job: its state, attempts, ``last_error`` and, once done, its ``result``."""
        return await self._run(calls.job(job_id))

    async def rerun_job(self, job_id: str) -> Job:
        """A failed or done job back to pending (attempts reset); `ConflictError` while it is
        pending or running."""
        return await self._run(calls.rerun_job(job_id))

    async def retry_extraction(self, *, status: str = "all_dropped",
                         owner: str | None = None) -> ExtractionRetry:
        """Extract facts again from the episodes whose last extraction ended with ``status``
        (one formation job per session is enqueued)."""
        return await self._run(calls.retry_extraction(status, owner))

    async def usage(self, *, since: date | None = None,
                    until: date | None = None) -> UsageReport:
        """This tenant's LLM calls per UTC day, operation and model, with tokens and totals
        (``since`` / ``until``: days, inclusive)."""
        return await self._run(calls.usage(since, until))

    # --- procedural memory -------------------------------------------------------------------

    async def add_traces(self, traces: Iterable[TraceIn | Mapping[str, Any]]) -> TraceReport:
        """Store agent runs (traces); returns once committed, steps included. Cases and
        skills form in the background. Safe to repeat (ids make it idempotent)."""
        return await self._run(calls.add_traces(traces))

    async def set_outcome(self, trace_id: str, outcome: Outcome, *,
                          score: float | None = None, detail: str | None = None,
                          feedback: str | None = None) -> OutcomeReport:
        """Record how a run ended, later (``score``, ``detail``, ``feedback``); its cases
        and the owner's skills form again."""
        return await self._run(calls.set_outcome(trace_id, outcome, score, detail, feedback))

    async def search_skills(self, query: str | SkillSearch, owner: str | None = None, *,
                            units: SkillUnits | None = None, k: int | None = None,
                            cases_per_skill: int | None = None, as_of: datetime | str | None = None,
                            known_at: datetime | str | None = None) -> SkillSearchResult:
        """Skills (methods learned from ``owner``'s runs) and cases for a task, best first.
        The keywords are the fields of `SkillSearch` (or pass one): ``units`` skills (each
        with its best cases) or cases, ``k`` of them, ``cases_per_skill`` cases a skill,
        skills valid ``as_of`` as recorded by ``known_at``. A keyword left None takes the
        server's default."""
        return await self._run(calls.search_skills(query, owner, {
            "units": units, "k": k, "cases_per_skill": cases_per_skill, "as_of": as_of,
            "known_at": known_at}))

    async def skill(self, skill_id: str, *, limit: int = 50) -> SkillDetail:
        """A skill version with its support: up to ``limit`` cases for it and against it."""
        return await self._run(calls.skill(skill_id, limit))

    async def skill_history(self, skill_id: str) -> SkillHistory:
        """Every version of a skill, with each supersession's reason and sources."""
        return await self._run(calls.skill_history(skill_id))

    async def case(self, case_id: str) -> CaseDetail:
        """A case with its skill, the steps it was derived from, and its trace."""
        return await self._run(calls.case(case_id))

    # --- documents ---------------------------------------------------------------------------
    async def add_document(self, document: DocumentIn | Mapping[str, Any]) -> DocumentWrite:
        """Store a document (JSON: text, Markdown, HTML, or a PDF as base64) as a new version
        of its key; the same content again changes nothing. Returns the version written."""
        return await self._run(calls.add_document(document))

    async def documents(self, owner: str, *, after: str = "", limit: int = 50,
                  history: bool = False, key: str | None = None,
                  as_of: datetime | str | None = None) -> list[Document]:
        """``owner``'s documents by key, after ``after``: the current version of each (every
        version with ``history``); with ``key`` and ``as_of``, the version valid then."""
        return await self._run(calls.documents(owner, after, limit, history, key, as_of))

    async def document(self, document_id: str, *, with_text: bool = False) -> DocumentDetail:
        """One document version: its state, every version of its key, its sections; with
        ``with_text``, the text its chunks' offsets point into."""
        return await self._run(calls.document(document_id, with_text))

    async def search_documents(self, query: str | ChunkSearch, owner: str | None = None, *,
                         k: int | None = None, documents: list[str] | None = None,
                         metadata: Mapping[str, Any] | None = None,
                         as_of: datetime | str | None = None,
                         method: Literal["vector", "fulltext", "rrf"] | None = None,
                         neighbours: int | None = None) -> ChunkResult:
        """The chunks of ``owner``'s documents best matching ``query``, each with its citation
        (document, version, section path, offsets). The keywords are the fields of
        `ChunkSearch` (or pass one); one left None takes the server's default."""
        return await self._run(calls.search_documents(query, owner, {
            "k": k, "documents": documents, "metadata": metadata, "as_of": as_of,
            "method": method, "neighbours": neighbours}))

    async def topics(self, owner: str) -> list[Topic]:
        """``owner``'s topic tree: every topic (categories at level 1, their parts at level 2,
        each naming its parent) with its label, number of documents and first/last times."""
        return await self._run(calls.topics(owner))

    async def topic(self, topic_id: str) -> TopicDetail:
        """One topic with its member documents (current versions) and its subtopics."""
        return await self._run(calls.topic(topic_id))

    # --- probes ------------------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        """``/healthz``: `UnavailableError` when the server cannot reach Neo4j."""
        return await self._run(calls.health())

    async def ready(self) -> dict[str, Any]:
        """``/readyz``: `UnavailableError` naming what is missing until ready."""
        return await self._run(calls.ready())
