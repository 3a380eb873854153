"""`AsyncGraphMem`: the asyncio client, the same methods as `GraphMem`, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import date, datetime
from types import TracebackType
from typing import Any, TypeVar

import httpx

from graphmem.client import calls
from graphmem.client.base import DEFAULT_TIMEOUT, Retry, httpx_options, no_answer, result
from graphmem.wire import (
    AnswerRequest,
    AnswerResult,
    AuditInfo,
    AuditResult,
    CaseDetail,
    ContextRequest,
    ContextResult,
    DeleteReport,
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
    TraceIn,
    TraceReport,
    UsageReport,
)

T = TypeVar("T")
Param = str | int | float | bool | datetime | date | None


class AsyncGraphMem:
    """A graphmem server over HTTP, for asyncio::

        async with AsyncGraphMem("http://127.0.0.1:8000", api_key="...") as gm:
            result = await gm.search("where does alice live?", owner="alice", k=5)

    The same arguments, methods, replies and exceptions as `GraphMem`.
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
        return str(self._http.base_url)

    async def aclose(self) -> None:
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

    async def search(self, query: str | SearchRequest, owner: str | None = None,
                     **options: Any) -> SearchResult:
        """Hybrid recall: ``search("where does alice live?", owner="alice", k=5)``; the options
        are the fields of `SearchRequest` (or pass one)."""
        return await self._run(calls.search(query, owner, options))

    async def context(self, query: str | ContextRequest, owner: str | None = None,
                      **options: Any) -> ContextResult:
        """The packed context for a question (facts, episodes, messages, each line with an
        evidence id); the options are the fields of `ContextRequest` (or pass one)."""
        return await self._run(calls.context(query, owner, options))

    async def answer(self, query: str | AnswerRequest, owner: str | None = None,
                     **options: Any) -> AnswerResult:
        """An answer read from that context by the server's LLM, citing its evidence. Sent
        once (it costs tokens); a server without an LLM answers 501 (`ServerError`)."""
        return await self._run(calls.answer(query, owner, options))

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
        return await self._run(calls.forget_trace(trace_id))

    async def forget_fact(self, fact_id: str) -> ForgetReport:
        return await self._run(calls.forget_fact(fact_id))

    # --- facts and audit ---------------------------------------------------------------------

    async def add_observations(self,
                               observations: Iterable[ObservationIn | Mapping[str, Any]]
                               ) -> list[FactWrite]:
        return await self._run(calls.add_observations(observations))

    async def observations(self, owner: str, *, subject: str | None = None,
                           type: str | None = None, as_of: datetime | None = None,
                           known_at: datetime | None = None,
                           include_history: bool = False) -> list[Fact]:
        return await self._run(calls.observations(owner, subject, type, as_of, known_at,
                                            include_history))

    async def observation_history(self, fact_id: str) -> FactHistory:
        return await self._run(calls.observation_history(fact_id))

    async def profile_ops(self, ops: Iterable[ProfileOp | Mapping[str, Any]]
                          ) -> list[FactWrite]:
        return await self._run(calls.profile_ops(ops))

    async def profile(self, owner: str, *, as_of: datetime | None = None,
                      known_at: datetime | None = None,
                      include_history: bool = False) -> list[Fact]:
        return await self._run(calls.profile(owner, as_of, known_at, include_history))

    async def audits(self) -> list[AuditInfo]:
        return await self._run(calls.audits())

    async def audit(self, name: str, /, **params: Param) -> AuditResult:
        """Run a named audit query; its parameters as keywords."""
        return await self._run(calls.audit(name, params))

    # --- jobs and usage ----------------------------------------------------------------------

    async def jobs(self, *, state: JobState | None = None, owner: str | None = None,
                   skip: int = 0, limit: int = 100) -> JobList:
        return await self._run(calls.jobs(state, skip, limit, owner))

    async def job(self, job_id: str) -> Job:
        return await self._run(calls.job(job_id))

    async def rerun_job(self, job_id: str) -> Job:
        return await self._run(calls.rerun_job(job_id))

    async def retry_extraction(self, *, status: str = "all_dropped",
                         owner: str | None = None) -> ExtractionRetry:
        """Extract facts again from the episodes whose last extraction ended with ``status``
        (one formation job per session is enqueued)."""
        return await self._run(calls.retry_extraction(status, owner))

    async def usage(self, *, since: date | None = None,
                    until: date | None = None) -> UsageReport:
        return await self._run(calls.usage(since, until))

    # --- procedural memory -------------------------------------------------------------------

    async def add_traces(self, traces: Iterable[TraceIn | Mapping[str, Any]]) -> TraceReport:
        return await self._run(calls.add_traces(traces))

    async def set_outcome(self, trace_id: str, outcome: Outcome, *,
                          score: float | None = None, detail: str | None = None,
                          feedback: str | None = None) -> OutcomeReport:
        return await self._run(calls.set_outcome(trace_id, outcome, score, detail, feedback))

    async def search_skills(self, query: str | SkillSearch, owner: str | None = None,
                            **options: Any) -> SkillSearchResult:
        return await self._run(calls.search_skills(query, owner, options))

    async def skill(self, skill_id: str, *, limit: int = 50) -> SkillDetail:
        return await self._run(calls.skill(skill_id, limit))

    async def skill_history(self, skill_id: str) -> SkillHistory:
        return await self._run(calls.skill_history(skill_id))

    async def case(self, case_id: str) -> CaseDetail:
        return await self._run(calls.case(case_id))

    # --- probes ------------------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        """``/healthz``: `Unavailable` when the server cannot reach Neo4j."""
        return await self._run(calls.health())

    async def ready(self) -> dict[str, Any]:
        """``/readyz``: `Unavailable` naming what is missing until ready."""
        return await self._run(calls.ready())
