"""`TenantMemory`: one tenant's memory, the front door for every caller (the HTTP API, the MCP
server, the CLI, the benchmark). Get it from `Memory.for_tenant(name)`; every call made through it
is bound to that tenant, so callers never pass a tenant again and never reach the store.

Sub-services, by what they hold:

    tm.messages   ingest, ingest_many, get, owners, sessions, session, forget (one),
                  forget_session, forget_matching (by a filter), forget_owner
    tm.export(owner, after, limit)       a page of everything stored about an owner (export_all:
                                         every page)
    tm.search(req)                       hybrid recall
    tm.context(req), tm.answer(req)      the packed context for a prompt, the reader's answer
    tm.facts      observe, query, history, forget, restore (observations, bitemporal)
    tm.profile    apply (ADD/UPDATE/DELETE/NOOP), get
    tm.episodes   search (episodes with their source messages)
    tm.jobs       list, get, rerun, retry_extraction (background formation)
    tm.usage(since, until)               LLM calls and tokens
    tm.audit      queries, run (the named read-only Cypher queries)
    tm.traces, tm.skills, tm.cases       procedural memory (traces.forget forgets one run)

Every call is checked against the caller's `Access` (``Memory.for_tenant(name, access,
caller)``): the owners it may use and whether it may write (see `graphmem.access`); ``caller``
(an API key's id, ``cli``, ``mcp-stdio``) goes into the audit record of each forgetting.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Literal

from graphmem import audit
from graphmem.access import Access
from graphmem.documents.models import (
    ChunkResult,
    ChunkSearch,
    Document,
    DocumentDetail,
    DocumentIn,
    DocumentWrite,
    Topic,
    TopicDetail,
)
from graphmem.errors import InvalidInput
from graphmem.facts.models import Fact, FactHistory, FactWrite, ObservationIn, ProfileOp
from graphmem.jobs import Job, JobList, JobState
from graphmem.lifecycle.export import DEFAULT_LIMIT, ExportRecord, OwnerExport
from graphmem.lifecycle.forget import ForgetReport
from graphmem.lifecycle.restore import documents_of
from graphmem.llm.usage import UsageReport
from graphmem.messages.ingest import derived_id
from graphmem.models import (
    AnswerRequest,
    AnswerResult,
    AuditInfo,
    AuditResult,
    ContextRequest,
    ContextResult,
    DeleteReport,
    ExtractionRetry,
    ExtractionRetryIn,
    ForgetMessages,
    IngestReport,
    Message,
    MessageIn,
    OwnerInfo,
    RetriedEpisode,
    SearchRequest,
    SearchResult,
    SessionInfo,
)
from graphmem.procedural.models import (
    CaseDetail,
    OutcomeIn,
    OutcomeReport,
    SkillDetail,
    SkillHistory,
    SkillSearch,
    SkillSearchResult,
    TraceIn,
    TraceReport,
)
from graphmem.procedural.steps import trace_id
from graphmem.retrieval import Recipe
from graphmem.tenant_ops import TenantOps

if TYPE_CHECKING:
    from graphmem.parts import Parts

MAX_TENANT_CHARS = 200


class _Bound:
    """A part of one tenant's memory, and what the caller may do in it."""

    def __init__(self, parts: Parts, ops: TenantOps, access: Access,
                 caller: str | None) -> None:
        self._parts = parts
        self._ops = ops
        self._tenant = ops.tenant
        self._stores = ops.stores
        self._access = access
        self._caller = caller

    def _owned(self, kind: Literal["message", "fact", "trace"], id_: str) -> None:
        """Before a change by id: NotFound when the thing is another owner's (only a key
        limited to some owners pays for the look-up). An id that names nothing goes on to the
        change itself, which says so (404, or already forgotten)."""
        if self._access.owners is not None:
            owner = self._ops.owner_of(kind, id_)
            if owner is not None:
                self._access.found(owner, kind, id_)


class Messages(_Bound):
    """Raw turns: kept forever as sent, read back by id or by session, forgotten per owner."""

    def ingest(self, messages: list[MessageIn]) -> IngestReport:
        """Store one batch in one transaction (idempotent per message id)."""
        self._check(messages)
        return self._ops.ingest_messages(messages, self._caller)

    def ingest_many(self, batches: Iterable[list[MessageIn]]) -> Iterator[IngestReport]:
        """Bulk ingest, embedding the next batch while the previous one commits."""
        self._access.write("storing messages")
        return self._ops.ingest_many(map(self._check, batches), self._caller)

    def _check(self, messages: list[MessageIn]) -> list[MessageIn]:
        self._access.write("storing messages")
        self._access.each_owner((m.owner for m in messages), "messages")
        if self._access.owners is not None:
            for i, m in enumerate(messages):
                self._access.chosen_id(f"messages[{i}]", m.id, m.id and derived_id(m))
        return messages

    def get(self, id_: str) -> Message:
        message = self._ops.get_message(id_)
        self._access.found(message.owner, "message", id_)
        return message

    def owners(self, after: str = "", limit: int = 50) -> list[OwnerInfo]:
        """This tenant's owners (with a conversation, a fact or a run) by name, after ``after``
        (a key limited to some owners: of those)."""
        return self._ops.owners(after, limit, self._access.owners)

    def sessions(self, owner: str, skip: int = 0, limit: int = 100) -> list[SessionInfo]:
        """``owner``'s sessions, the one with the latest message first."""
        return self._ops.sessions(self._access.owner(owner), skip, limit)

    def session(self, session_id: str, owner: str | None = None, skip: int = 0,
                limit: int = 100) -> list[Message]:
        """A session's messages in event-time order (a key limited to one owner reads that
        owner's; one limited to several must name the owner)."""
        owner = self._access.one_owner(owner, "the session")
        return self._ops.session_messages(session_id, owner, skip, limit)

    def forget(self, id_: str) -> ForgetReport:
        """Forget one message and what rests only on it (see `graphmem.lifecycle.forget`)."""
        self._access.write("forgetting a message")
        self._owned("message", id_)
        return self._ops.forget_message(id_, self._caller)

    def forget_session(self, owner: str, session_id: str) -> ForgetReport:
        """Forget every message of ``owner``'s session and what rests only on them."""
        self._access.write("forgetting a session")
        return self._ops.forget_session(self._access.owner(owner), session_id,
                                           self._caller)

    def forget_matching(self, req: ForgetMessages) -> ForgetReport:
        """Forget an owner's messages chosen by a filter (metadata, session, time) and what
        rests only on them (at most `max_forget_matching_messages` a call)."""
        self._access.write("forgetting messages")
        self._access.owner(req.owner)
        return self._ops.forget_matching(req, self._caller)

    def forget_owner(self, owner: str) -> DeleteReport:
        """Delete everything of ``owner`` in this tenant: messages, facts, episodes, jobs, runs."""
        self._access.write("forgetting an owner")
        return self._ops.delete_owner(self._access.owner(owner))


class Facts(_Bound):
    """Observations: facts about any subject, with valid time and recorded time."""

    def observe(self, observations: Sequence[ObservationIn]) -> list[FactWrite]:
        """Through the Linker, one transaction; sources are messages, facts or episodes of the
        owners the caller may use."""
        self._access.write("recording facts")
        self._access.each_owner((o.owner for o in observations), "observations")
        for i, o in enumerate(observations):  # its derived id waits for its sources' times
            self._access.chosen_id(f"observations[{i}]", o.id, None)
        return self._parts.facts.observe(self._stores, observations, self._access.owners,
                                          self._caller)

    def restore(self, records: Sequence[ExportRecord]) -> tuple[int, int]:
        """Store again the fact versions of an export as they were recorded (observations and
        the profile); returns (created, already there)."""
        self._access.write("restoring facts")
        for i, r in enumerate(records):
            if r.kind == "fact":
                self._access.owner(str(r.properties.get("owner")), f"records[{i}].owner")
        return self._parts.facts.restore(self._stores, records)

    def query(self, owner: str, subject: str | None = None, type_: str | None = None,
              as_of: datetime | None = None, known_at: datetime | None = None,
              include_history: bool = False) -> list[Fact]:
        return self._parts.facts.query(self._stores, "observation", self._access.owner(owner),
                                        subject, type_, as_of, known_at, include_history)

    def history(self, id_: str) -> FactHistory:
        """A fact's whole chain with every SUPERSEDES reason; NotFound for an unknown id."""
        history = self._parts.facts.history(self._stores, id_)
        self._access.found(history.facts[0].owner if history.facts else None, "fact", id_)
        return history

    def forget(self, id_: str) -> ForgetReport:
        """Forget one fact and the facts resting only on it."""
        self._access.write("forgetting a fact")
        self._owned("fact", id_)
        return self._ops.forget_fact(id_, self._caller)


class Profile(_Bound):
    """One owner's profile keys (single-valued facts about the owner)."""

    def apply(self, ops: Sequence[ProfileOp]) -> list[FactWrite]:
        self._access.write("changing a profile")
        self._access.each_owner((op.owner for op in ops), "ops")
        return self._parts.facts.profile_ops(self._stores, ops, self._access.owners,
                                              self._caller)

    def get(self, owner: str, as_of: datetime | None = None, known_at: datetime | None = None,
            include_history: bool = False) -> list[Fact]:
        return self._parts.facts.query(self._stores, "profile", self._access.owner(owner),
                                        None, None, as_of, known_at, include_history)


class Episodes(_Bound):
    """Episodes formed from sessions in the background."""

    def search(self, query: str, owner: str, k: int = 10) -> SearchResult:
        """The best episodes for ``query``, each with its source messages."""
        req = SearchRequest(query=query, owner=self._access.owner(owner), k=k, units="episodes")
        return self._ops.search_units(req)


class Jobs(_Bound):
    """This tenant's background jobs; a key limited to some owners sees those owners' (and
    must name one when it has several)."""

    def list(self, state: JobState | None = None, limit: int = 100, skip: int = 0,
             owner: str | None = None) -> JobList:
        """The jobs, most recently changed first, with counts per state (of ``owner``'s jobs
        only, if given)."""
        owner = self._access.one_owner(owner, "the jobs")
        queue = self._parts.jobs
        return JobList(jobs=queue.list(self._tenant, state, limit, skip, owner),
                       counts=queue.counts(self._tenant, owner))

    def get(self, id_: str) -> Job:
        job = self._parts.jobs.get(self._tenant, id_)
        self._access.found(job.owner, "job", id_)
        return job

    def rerun(self, id_: str) -> Job:
        """A failed or done job back to pending: NotFound, or Conflict while it is live."""
        self._access.write("running a job again")
        if self._access.owners is not None:
            self.get(id_)  # another owner's job (or one of no owner) is unknown to the key
        return self._parts.jobs.rerun(self._tenant, id_)

    def retry_extraction(self, req: ExtractionRetryIn) -> ExtractionRetry:
        """Episodes whose extraction ended with ``req.status`` are extracted again by a
        ``form_session`` job per session (enqueued with the reset, in one transaction); of one
        owner for a key limited to some."""
        self._access.write("retrying extraction")
        if req.owner is None:
            self._access.tenant_wide("retrying extraction without an owner")
        else:
            self._access.owner(req.owner)
        episodes, jobs = self._stores.episodes.reset_extraction(
            req.status, req.owner, self._parts.settings.job_max_attempts)
        return ExtractionRetry(episodes=[RetriedEpisode(**e) for e in episodes],
                               jobs=[j["id"] for j in jobs])


class Audit(_Bound):
    """The named read-only audit queries (``cypher/audit/``), run for this tenant only."""

    def queries(self) -> list[AuditInfo]:
        return [AuditInfo(name=q.name, purpose=q.purpose, params=q.params, columns=q.columns,
                          example=q.example) for q in audit.all_queries()]

    def run(self, name: str, params: Mapping[str, str]) -> AuditResult:
        """Run query ``name`` (NotFound unless listed by `queries`); ``params`` are its declared
        parameters as strings, typed here (InvalidInput naming the parameter otherwise);
        ``tenant`` is never taken from them. A key limited to some owners runs the queries of
        one ``owner`` for its owners; the others span the tenant (integrity, deletions) or name
        things by id, and need a key for every owner."""
        if self._access.owners is not None:
            if "owner" not in audit.get(name).params:
                self._access.tenant_wide(f"the audit query {name!r}")
            if "owner" in params:
                self._access.owner(params["owner"])
        rows = audit.run(self._parts.store, self._tenant, name, dict(params))
        return AuditResult(name=name, rows=rows)


class Traces(_Bound):
    """Procedural memory's input: agent runs, and their outcomes recorded later."""

    def ingest(self, traces: Sequence[TraceIn]) -> TraceReport:
        self._access.write("storing agent runs")
        self._access.each_owner((t.owner for t in traces), "traces")
        if self._access.owners is not None:
            for i, t in enumerate(traces):
                self._access.chosen_id(f"traces[{i}]", t.id, t.id and trace_id(t))
        return self._parts.procedural.ingest(self._stores, traces, self._caller)

    def set_outcome(self, id_: str, body: OutcomeIn) -> OutcomeReport:
        self._access.write("recording an outcome")
        self._owned("trace", id_)
        return self._parts.procedural.set_outcome(self._stores, id_, body)

    def forget(self, id_: str) -> ForgetReport:
        """Forget one trace, its steps and cases, and the skill versions resting only on them."""
        self._access.write("forgetting an agent run")
        self._owned("trace", id_)
        return self._ops.forget_trace(id_, self._caller)


class Skills(_Bound):
    def search(self, req: SkillSearch) -> SkillSearchResult:
        self._access.owner(req.owner)
        return self._parts.procedural.search(self._stores, req)

    def get(self, id_: str, limit: int = 50, as_of: datetime | None = None,
            known_at: datetime | None = None) -> SkillDetail:
        if self._access.owners is not None and (as_of or known_at):
            self.history(id_)  # whose it is, before "no version valid then" could tell it exists
        detail = self._parts.procedural.skill(self._stores, id_, limit, as_of, known_at)
        self._access.found(detail.skill.owner, "skill", id_)
        return detail

    def history(self, id_: str) -> SkillHistory:
        history = self._parts.procedural.history(self._stores, id_)
        self._access.found(history.skills[0].owner if history.skills else None, "skill",
                           id_)
        return history


class Cases(_Bound):
    def get(self, id_: str) -> CaseDetail:
        detail = self._parts.procedural.case(self._stores, id_)
        self._access.found(detail.case.owner, "case", id_)
        return detail


class Documents(_Bound):
    """Documents an agent or a user hands over: versions of a key per owner, their sections
    and chunks, chunk search with citations."""

    def ingest(self, doc: DocumentIn, content: str | bytes | None = None) -> DocumentWrite:
        """Store a version of ``doc.key`` (nothing for the same content); ``content``: an
        upload's bytes instead of ``doc.content``."""
        self._access.write("storing documents")
        self._access.owner(doc.owner)
        return self._parts.documents.ingest(self._stores, doc, content, self._caller)

    def search(self, req: ChunkSearch) -> ChunkResult:
        self._access.owner(req.owner)
        return self._parts.documents.search(self._stores, req)

    def list(self, owner: str, after: str = "", limit: int = 50,
             history: bool = False) -> list[Document]:
        """``owner``'s documents by key (the current version of each; every version with
        ``history``)."""
        return self._parts.documents.listing(self._stores, self._access.owner(owner), after,
                                           limit, history)

    def get(self, id_: str, with_text: bool = False) -> DocumentDetail:
        """One version, every version of its key, and its sections (NotFound for an unknown id
        or, to a key limited to some owners, another owner's)."""
        if self._access.owners is not None:
            self._access.found(self._parts.documents.owner_of(self._stores, id_), "document",
                               id_)
        return self._parts.documents.get(self._stores, id_, with_text)

    def forget(self, id_: str) -> ForgetReport:
        """Forget a document: every version of its key, their sections and chunks (audited)."""
        self._access.write("forgetting a document")
        if self._access.owners is not None:
            owner = self._parts.documents.owner_of(self._stores, id_)
            if owner is not None:
                self._access.found(owner, "document", id_)
        return self._ops.forget_document(id_, self._caller)

    def topics(self, owner: str) -> builtins.list[Topic]:
        """``owner``'s topic tree (categories of its documents and their parts)."""
        return self._parts.documents.topics(self._stores, self._access.owner(owner))

    def topic(self, id_: str) -> TopicDetail:
        """One topic with its member documents and subtopics."""
        if self._access.owners is not None:
            self._access.found(self._parts.documents.topic_owner(self._stores, id_), "topic",
                               id_)
        return self._parts.documents.topic(self._stores, id_)

    def restore(self, records: Sequence[ExportRecord]) -> tuple[int, int]:
        """Store again the document versions of an export as they were recorded, then build
        each owner's topic tree; returns (created, already there)."""
        self._access.write("restoring documents")
        for i, r in enumerate(records):
            if r.kind == "document":
                self._access.owner(str(r.properties.get("owner")), f"records[{i}].owner")
        return self._parts.documents.restore(self._stores, documents_of(records))

    def build_topics(self, owner: str) -> dict[str, object]:
        """Build ``owner``'s topic tree now (the background job does it after each change)."""
        self._access.write("building topics")
        return self._parts.documents.build_topics(self._stores, self._access.owner(owner))

    def version_at(self, owner: str, key: str, as_of: datetime) -> DocumentDetail:
        """The version of ``owner``'s ``key`` valid at ``as_of``."""
        id_ = self._parts.documents.version_at(self._stores, self._access.owner(owner), key,
                                                as_of)
        return self._parts.documents.get(self._stores, id_)


class TenantMemory:
    """One tenant's memory. Thread-safe and cheap: make one per request or per connection."""

    def __init__(self, parts: Parts, tenant: str, access: Access | None = None,
                 caller: str | None = None) -> None:
        if not tenant or len(tenant) > MAX_TENANT_CHARS:
            raise InvalidInput("tenant", f"a tenant is 1 to {MAX_TENANT_CHARS} characters")
        access = access or Access(tenant=tenant)
        if access.tenant != tenant:
            raise ValueError(f"access to tenant {access.tenant!r} used for {tenant!r}")
        self.tenant = tenant
        self.access = access
        self.caller = caller
        """Who uses this memory, kept in the audit records of what it forgets."""
        self._ops = ops = TenantOps(parts, tenant)
        bound = (parts, ops, access, caller)
        self.messages = Messages(*bound)
        self.facts = Facts(*bound)
        self.profile = Profile(*bound)
        self.episodes = Episodes(*bound)
        self.jobs = Jobs(*bound)
        self.audit = Audit(*bound)
        self.traces = Traces(*bound)
        self.skills = Skills(*bound)
        self.cases = Cases(*bound)
        self.documents = Documents(*bound)

    def search(self, req: SearchRequest, recipe: Recipe | None = None, *,
               timings: dict[str, float] | None = None) -> SearchResult:
        """Hybrid recall (see the README's "Retrieval"); ``recipe``: another than the request's
        (`Memory.recipe`); ``timings``: milliseconds per stage are added to it."""
        self.access.owner(req.owner)
        return self._ops.search_units(req, recipe, timings=timings)

    def context(self, req: ContextRequest) -> ContextResult:
        """What to put in a prompt about ``req.query``: facts, episodes and messages packed
        within ``req.max_tokens``, each line with its evidence id."""
        self.access.owner(req.owner)
        return self._ops.context(req)

    def answer(self, req: AnswerRequest) -> AnswerResult:
        """The reader's answer from that context (ReaderNotConfigured without an LLM)."""
        self.access.owner(req.owner)
        return self._ops.answer(req)

    def export(self, owner: str, after: str = "", limit: int = DEFAULT_LIMIT) -> OwnerExport:
        """A page of everything stored about ``owner`` (records in a fixed order; ``next`` is
        the cursor of the next page); `export_all` walks every page."""
        return self._ops.export_owner(self.access.owner(owner), after, limit)

    def export_all(self, owner: str, limit: int = DEFAULT_LIMIT) -> Iterator[ExportRecord]:
        """Every record of ``owner``'s export, page after page."""
        after = ""
        while True:
            got = self.export(owner, after, limit)
            yield from got.records
            if got.next is None:
                return
            after = got.next

    def usage(self, since: date | None = None, until: date | None = None) -> UsageReport:
        """LLM calls and tokens per UTC day, operation and model (inclusive dates); they span
        the tenant."""
        self.access.tenant_wide("LLM usage")
        return self._ops.llm_usage(since, until)
