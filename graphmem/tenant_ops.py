"""`TenantOps`: one tenant's operations over the process's `Parts`, every store bound to the
tenant. No access checks here: `graphmem.tenant_memory.TenantMemory` checks each call and then
does its work through these."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime
from typing import Any, Literal

from graphmem import metrics
from graphmem.answer.reader import ReaderNotConfigured
from graphmem.documents import recall
from graphmem.documents.models import ChunkHit, ChunkResult, ChunkSearch
from graphmem.documents.service import Documents
from graphmem.embeddings import Embedder, QueryMemo
from graphmem.errors import InvalidInput, NotFound
from graphmem.lifecycle import export
from graphmem.lifecycle.export import OwnerExport
from graphmem.lifecycle.forget import ForgetReport, forget, forget_matching, forget_session
from graphmem.llm.usage import UsageDay, UsageReport, tenant_scope
from graphmem.messages.ingest import Ingestor
from graphmem.models import (
    AnswerRequest,
    AnswerResult,
    ContextRequest,
    ContextResult,
    DeleteReport,
    ForgetMessages,
    IngestReport,
    Message,
    MessageIn,
    OwnerInfo,
    SearchRequest,
    SearchResult,
    SessionInfo,
)
from graphmem.parts import CONTEXT_SKILLS, DEFAULT_METHOD, SKILL_CASES, Parts
from graphmem.procedural.models import Skill, SkillSearch
from graphmem.retrieval import Recipe, packing
from graphmem.retrieval.search import Runtime, search
from graphmem.store.export import ExportStore
from graphmem.store.usage import UsageStore

TOPIC_MEMBERS = 10_000
"""The most documents of one topic a topic filter reads."""


class TenantOps:
    """One tenant's messages, recall, context, export and forgetting (`graphmem.parts.Parts`
    holds what they run on)."""

    def __init__(self, parts: Parts, tenant: str) -> None:
        self._parts = parts
        self.tenant = tenant
        self.stores = parts.store.tenant_stores(tenant)
        self.store = self.stores.messages

    # --- messages -----------------------------------------------------------------------------
    @metrics.observe_ingest
    def ingest_messages(self, messages: list[MessageIn],
                        by: str | None = None) -> IngestReport:
        ingestor: Ingestor = self._parts.ingestor
        return ingestor.ingest_batch(self.store, messages, by)

    @metrics.observe_ingest_many
    def ingest_many(
        self, batches: Iterable[list[MessageIn]], by: str | None = None
    ) -> Iterator[IngestReport]:
        """Bulk ingest, embedding the next batch while the previous one commits."""
        return self._parts.ingestor.ingest_many(self.store, batches, by)

    def get_message(self, id_: str) -> Message:
        rows = self.store.get_messages([id_])
        if not rows:
            raise NotFound(f"no message {id_!r}")
        return _message(rows[0])

    def session_messages(
        self, session_id: str, owner: str | None = None, skip: int = 0,
        limit: int = 100,
    ) -> list[Message]:
        rows = self.store.session_messages(session_id, owner, skip, limit)
        return [_message(r) for r in rows]

    def sessions(self, owner: str, skip: int = 0,
                 limit: int = 100) -> list[SessionInfo]:
        """An owner's sessions, the one with the latest message first."""
        rows = self.store.owner_sessions(owner, skip, limit)
        return [SessionInfo.model_validate(r) for r in rows]

    def owners(self, after: str = "", limit: int = 50,
               named: frozenset[str] | None = None) -> list[OwnerInfo]:
        """The tenant's owners by name, those after ``after`` (keyset paging); ``named``: of
        those owners only."""
        return [OwnerInfo.model_validate(r)
                for r in self.store.owners(after, limit, named)]

    def owner_of(self, kind: Literal["message", "fact", "trace"],
                 id_: str) -> str | None:
        """The owner of a stored message, fact or trace; None when the id names none."""
        return self.store.owner_of(kind, id_)

    def export_owner(self, owner: str, after: str = "",
                     limit: int = export.DEFAULT_LIMIT) -> OwnerExport:
        """A page of everything stored about ``owner`` (see `graphmem.lifecycle.export`), after
        cursor ``after``. NotFound when the owner has nothing stored (the first page is empty)."""
        reader = ExportStore(self._parts.store, self.tenant).page
        result = export.page(lambda kind, after_id, room: reader(kind, owner, after_id, room),
                             owner, after, limit, datetime.now(UTC))
        if not after and not result.records:
            raise NotFound(f"nothing stored for owner {owner!r}")
        return result

    def delete_owner(self, owner: str) -> DeleteReport:
        removed = self.store.delete_owner(owner)
        return DeleteReport(owner=owner, **removed)

    # --- forgetting one thing (see graphmem.lifecycle.forget for what goes with it) ---------
    def forget_message(self, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one message, its units, windows and episode (re-formed from the rest) and the
        facts resting only on it; one transaction, audited. NotFound for an unknown id."""
        return forget(self._parts.store, self.tenant, "message", id_, by)

    def forget_session(self, owner: str, session_id: str,
                       by: str | None = None) -> ForgetReport:
        """Forget every message of one session of ``owner`` and what rests only on them; one
        transaction, audited. NotFound for an unknown session, TooLarge (nothing deleted) beyond
        ``max_forget_session_messages``."""
        return forget_session(self._parts.store, self.tenant, owner, session_id,
                              self._parts.settings.max_forget_session_messages, by)

    def forget_matching(self, req: ForgetMessages,
                        by: str | None = None) -> ForgetReport:
        """Forget an owner's messages that ``req`` chooses (metadata, session, time) and what
        rests only on them; one transaction, audited. TooLarge (nothing deleted) beyond
        ``max_forget_matching_messages``."""
        return forget_matching(self._parts.store, self.tenant, req,
                               self._parts.settings.max_forget_matching_messages, by)

    def forget_trace(self, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one trace, its steps and cases, and the skill versions resting only on them
        (the owner's skills are re-formed from the other cases)."""
        return forget(self._parts.store, self.tenant, "trace", id_, by)

    def forget_document(self, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one document: every version of its key, their sections and chunks."""
        return forget(self._parts.store, self.tenant, "document", id_, by)

    def forget_fact(self, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one fact and the facts resting only on it; the facts it superseded stay
        closed."""
        return forget(self._parts.store, self.tenant, "fact", id_, by)

    def llm_usage(self, since: date | None = None,
                  until: date | None = None) -> UsageReport:
        """The tenant's LLM calls per UTC day, operation and model, and totals per operation."""
        rows = UsageStore(self._parts.store).list(self.tenant, since, until)
        return UsageReport.of([UsageDay.model_validate(r) for r in rows])

    @metrics.observe_search
    def search_units(
        self, req: SearchRequest, recipe: Recipe | None = None, *,
        embedder: Embedder | None = None, timings: dict[str, float] | None = None,
    ) -> SearchResult:
        """``embedder``: the model to embed the query with (default: this Memory's); `context`
        passes one `QueryMemo` to its searches so the question is embedded once. ``timings``:
        milliseconds per stage are added to it (`graphmem.retrieval.search.STAGES`)."""
        if req.units == "chunks":
            return self._search_chunks(req, embedder, timings)
        parts = self._parts
        recipe = recipe or parts.recipe(req.method, req.preset)
        runtime = Runtime(embedder or parts.embedder, parts.search_pool, parts.sparse,
                          parts.decider(recipe) if req.method == "iterative" else None)
        with tenant_scope(self.tenant):  # the decider's LLM calls are the tenant's
            return search(self.stores, recipe, req, runtime, timings)

    def _search_chunks(self, req: SearchRequest, embedder: Embedder | None,
                       timings: dict[str, float] | None) -> SearchResult:
        """Unit ``chunks``: the documents' own search, its result in the shared shape."""
        docs: Documents = self._parts.documents
        if embedder is not None:
            docs = docs.with_embedder(embedder)
        asked = self._in_topic(recall.chunk_search(req), req.topic)
        found = (ChunkResult(query=req.query, chunks=[]) if asked is None
                 else docs.search(self.stores, asked, timings))
        return recall.search_result(req, found)

    # --- for agents: the context to put in a prompt, and answers from it ------------------------
    def context(self, req: ContextRequest) -> ContextResult:
        """Messages, episodes and facts valid at ``req.as_of``, with unit ``skill`` the top
        skills valid then, and with unit ``chunk`` the best chunks of the document versions
        valid then, each with its sources, packed within ``req.max_tokens``
        (`graphmem.retrieval.packing`)."""
        self._parts.recipe(DEFAULT_METHOD, req.preset)  # an unknown preset fails before any search
        memo = QueryMemo(self._parts.embedder)

        def searches(reqs: Sequence[SearchRequest]) -> list[SearchResult]:
            """The unit searches side by side (the first on this thread); the query is embedded
            once, by whichever gets to it first (`QueryMemo`)."""
            later = [self._parts.units.submit(self.search_units, r, None, embedder=memo)
                     for r in reqs[1:]]
            first = [self.search_units(reqs[0], None, embedder=memo)] if reqs else []
            return first + [f.result() for f in later]

        now = datetime.now(UTC)
        skill = None
        if "skill" in req.units:  # beside the unit searches
            skill = self._parts.units.submit(
                self._parts.procedural.search, self.stores, SkillSearch(
                    query=req.query, owner=req.owner, k=CONTEXT_SKILLS,
                    cases_per_skill=SKILL_CASES, as_of=req.as_of or now), memo)

        def best_skill() -> list[Skill]:
            return skill.result().skills if skill is not None else []

        method = req.method or DEFAULT_METHOD
        chunks = None
        if "chunk" in req.units:  # beside the unit searches too
            asked = self._in_topic(ChunkSearch(
                query=req.query, owner=req.owner, k=req.k, documents=req.documents,
                metadata=req.metadata, as_of=req.as_of or now,
                method=recall.chunk_method(method)), req.topic)
            if asked is not None:
                chunks = self._parts.units.submit(
                    self._parts.documents.with_embedder(memo).search, self.stores, asked)

        def best_chunks() -> list[ChunkHit]:
            return chunks.result().chunks if chunks is not None else []

        return packing.build(searches, req, method, now, best_skill, best_chunks)

    def _in_topic(self, req: ChunkSearch, topic: str | None) -> ChunkSearch | None:
        """``req`` narrowed to the documents filed under ``topic`` (and to its own keys, if it
        names some); None when no document is left. InvalidInput naming ``topic`` for a topic
        not ``req.owner``'s, as for an id never stored."""
        if topic is None:
            return req
        try:  # one read: the topic with its members (and whose it is)
            found = self._parts.documents.topic(self.stores, topic, TOPIC_MEMBERS)
        except NotFound:
            found = None
        if found is None or found.topic.owner != req.owner:
            raise InvalidInput("topic", f"no topic {topic!r} of owner {req.owner!r}")
        keys = sorted({m.key for m in found.members})
        if req.documents is not None:
            wanted = set(req.documents)
            keys = [k for k in keys if k in wanted]
        return req.model_copy(update={"documents": keys}) if keys else None

    def answer(self, req: AnswerRequest) -> AnswerResult:
        """The reader's answer to ``req.query`` from its packed context, citing its items.
        `ReaderNotConfigured` (501) without an LLM; `LLMFailure` (502) when the model gave no
        usable reply."""
        if self._parts.reader is None:
            raise ReaderNotConfigured()
        return self._parts.reader.answer(self.tenant, self.context(req))


def _message(row: dict[str, Any]) -> Message:
    meta = json.loads(row.pop("metadata_json", None) or "{}")
    return Message(**row, metadata=meta)
