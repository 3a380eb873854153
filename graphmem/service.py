"""`Memory`: the library's front door. The API, the CLI and the benchmark all go through it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import UTC, date, datetime
from typing import Any, Literal

from graphmem import metrics
from graphmem.access import Access
from graphmem.answer.reader import Reader, ReaderNotConfigured
from graphmem.config import Settings
from graphmem.documents.service import Documents
from graphmem.embedders.sparse import sparse_encoder
from graphmem.embeddings import Embedder, LazyEmbedder, QueryMemo, embedder_for
from graphmem.errors import NotFound
from graphmem.facts.service import Facts
from graphmem.formation.run import Former
from graphmem.jobs import JobQueue
from graphmem.lifecycle import export
from graphmem.lifecycle.export import OwnerExport
from graphmem.lifecycle.forget import ForgetReport, forget, forget_matching, forget_session
from graphmem.llm.client import LLMClient
from graphmem.llm.usage import UsageDay, UsageReport, tenant_scope, tenant_sink
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
    Method,
    OwnerInfo,
    SearchRequest,
    SearchResult,
    SessionInfo,
)
from graphmem.procedural.models import Skill, SkillSearch
from graphmem.procedural.service import Procedural
from graphmem.retrieval import Recipe, packing, recipes, rerank
from graphmem.retrieval.deciders import LLMDecider, OfflineDecider
from graphmem.retrieval.iterative import Decider
from graphmem.retrieval.search import Runtime, Stores, search
from graphmem.store import Store
from graphmem.store.episodes import EpisodeStore
from graphmem.store.export import ExportStore
from graphmem.store.facts import FactStore
from graphmem.store.jobs import JobStore
from graphmem.store.usage import UsageStore
from graphmem.tenant_memory import TenantMemory

DEFAULT_METHOD: Method = "rrf_expand"
"""The search method of a context when neither the request nor the preset names one."""
SKILL_CASES = 3
CONTEXT_SKILLS = 3
"""The top skills a context with unit ``skill`` brings (best first)."""
"""The supporting cases a context's skill brings as its sources."""


class Memory:
    """Long-term memory over one Neo4j database. Thread-safe; one per process is enough.

    >>> mem = Memory.open(Settings())            # connects, applies the schema, loads the model
    >>> mem.ingest("acme", [MessageIn(...)])
    >>> mem.search("acme", SearchRequest(query="...", owner="alice"))
    """

    def __init__(self, settings: Settings, store: Store, embedder: Embedder) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self._ingestor = Ingestor(settings, embedder)
        self.facts = Facts(settings, store, embedder)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphmem-search")
        self.procedural = Procedural.for_settings(settings, store, embedder, self._pool)
        self.documents = Documents(settings, store, embedder, self._pool)
        self.sparse = sparse_encoder(settings.sparse, settings.embedding_cache_dir)
        self.former = Former.for_settings(settings, store, embedder, self.facts, self.sparse)
        # a context request's unit searches, side by side; apart from _pool, whose tasks (index
        # queries) never wait on others, so a unit search may wait on _pool without deadlock
        self._units = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphmem-units")
        self._decide_llm: LLMClient | None = None
        self.reader = Reader.for_settings(settings, store)

    @property
    def search_pool(self) -> Executor:
        """The pool a search runs its index queries in (for benchmarks that run a search's
        stages themselves)."""
        return self._pool

    @classmethod
    def open(cls, settings: Settings, *, apply_schema: bool = True,
             lazy_model: bool = False) -> Memory:
        """``lazy_model``: load the embedding model on first use (for callers that may never
        embed: forgetting, audit queries)."""
        embedder: Embedder = LazyEmbedder(settings) if lazy_model else embedder_for(settings)
        store = Store(settings)
        if apply_schema:
            try:
                store.apply_schema(embedder.name, embedder.dimensions)
            except BaseException:
                store.close()
                raise
        return cls(settings, store, embedder)

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        self._units.shutdown(wait=False)
        if self.reader is not None:
            self.reader.close()
        if self._decide_llm is not None:
            self._decide_llm.close()
        self.store.close()

    def for_tenant(self, name: str, access: Access | None = None,
                   caller: str | None = None) -> TenantMemory:
        """One tenant's memory: the way in for the API, the MCP server, the CLI and the bench;
        ``access`` limits what it may do (default: everything, as a tenant's key), ``caller``
        names who uses it in the audit records (an API key's id, ``cli``, ``mcp-stdio``)."""
        return TenantMemory(self, name, access, caller)

    @property
    def jobs(self) -> JobQueue:
        """The durable queue of background work (formation)."""
        return JobQueue(self.store)

    def ensure_schema(self) -> None:
        self.store.apply_schema(self.embedder.name, self.embedder.dimensions)

    # --- operations (every tenant; health, readiness, metrics) ---------------------------------
    def ping(self) -> None:
        """StoreUnavailable unless Neo4j answers."""
        self.store.ping()

    def index_states(self) -> dict[str, str]:
        """Each index's name and state (``ONLINE`` when usable)."""
        return {r["name"]: r["state"] for r in self.store.run("queries/index_states")}

    def job_counts_all(self, states: Iterable[str], cap: int) -> dict[str, int]:
        """Jobs per state over every tenant, each capped at ``cap``."""
        return JobStore(self.store).counts_all(states, cap)

    # --- messages -----------------------------------------------------------------------------
    @metrics.observe_ingest
    def ingest(self, tenant: str, messages: list[MessageIn],
               by: str | None = None) -> IngestReport:
        return self._ingestor.ingest(self.store.tenant(tenant), messages, by)

    @metrics.observe_ingest_many
    def ingest_many(
        self, tenant: str, batches: Iterable[list[MessageIn]], by: str | None = None
    ) -> Iterator[IngestReport]:
        """Bulk ingest, embedding the next batch while the previous one commits."""
        return self._ingestor.ingest_many(self.store.tenant(tenant), batches, by)

    def get_message(self, tenant: str, id_: str) -> Message:
        rows = self.store.tenant(tenant).get_messages([id_])
        if not rows:
            raise NotFound(f"no message {id_!r}")
        return _message(rows[0])

    def session_messages(
        self, tenant: str, session_id: str, owner: str | None = None, skip: int = 0,
        limit: int = 100,
    ) -> list[Message]:
        rows = self.store.tenant(tenant).session_messages(session_id, owner, skip, limit)
        return [_message(r) for r in rows]

    def sessions(self, tenant: str, owner: str, skip: int = 0,
                 limit: int = 100) -> list[SessionInfo]:
        """An owner's sessions, the one with the latest message first."""
        rows = self.store.tenant(tenant).owner_sessions(owner, skip, limit)
        return [SessionInfo.model_validate(r) for r in rows]

    def owners(self, tenant: str, after: str = "", limit: int = 50,
               named: frozenset[str] | None = None) -> list[OwnerInfo]:
        """The tenant's owners by name, those after ``after`` (keyset paging); ``named``: of
        those owners only."""
        return [OwnerInfo.model_validate(r)
                for r in self.store.tenant(tenant).owners(after, limit, named)]

    def owner_of(self, tenant: str, kind: Literal["message", "fact", "trace"],
                 id_: str) -> str | None:
        """The owner of a stored message, fact or trace; None when the id names none."""
        return self.store.tenant(tenant).owner_of(kind, id_)

    def export_owner(self, tenant: str, owner: str, after: str = "",
                     limit: int = export.DEFAULT_LIMIT) -> OwnerExport:
        """A page of everything stored about ``owner`` (see `graphmem.lifecycle.export`), after
        cursor ``after``. NotFound when the owner has nothing stored (the first page is empty)."""
        reader = ExportStore(self.store, tenant).page
        result = export.page(lambda kind, after_id, room: reader(kind, owner, after_id, room),
                             owner, after, limit, datetime.now(UTC))
        if not after and not result.records:
            raise NotFound(f"nothing stored for owner {owner!r}")
        return result

    def delete_owner(self, tenant: str, owner: str) -> DeleteReport:
        removed = self.store.tenant(tenant).delete_owner(owner)
        return DeleteReport(owner=owner, **removed)

    # --- forgetting one thing (see graphmem.lifecycle.forget for what goes with it) ---------
    def forget_message(self, tenant: str, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one message, its units, windows and episode (re-formed from the rest) and the
        facts resting only on it; one transaction, audited. NotFound for an unknown id."""
        return forget(self.store, tenant, "message", id_, by)

    def forget_session(self, tenant: str, owner: str, session_id: str,
                       by: str | None = None) -> ForgetReport:
        """Forget every message of one session of ``owner`` and what rests only on them; one
        transaction, audited. NotFound for an unknown session, TooLarge (nothing deleted) beyond
        ``max_forget_session_messages``."""
        return forget_session(self.store, tenant, owner, session_id,
                              self.settings.max_forget_session_messages, by)

    def forget_matching(self, tenant: str, req: ForgetMessages,
                        by: str | None = None) -> ForgetReport:
        """Forget an owner's messages that ``req`` chooses (metadata, session, time) and what
        rests only on them; one transaction, audited. TooLarge (nothing deleted) beyond
        ``max_forget_matching_messages``."""
        return forget_matching(self.store, tenant, req, self.settings.max_forget_matching_messages,
                               by)

    def forget_trace(self, tenant: str, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one trace, its steps and cases, and the skill versions resting only on them
        (the owner's skills are re-formed from the other cases)."""
        return forget(self.store, tenant, "trace", id_, by)

    def forget_document(self, tenant: str, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one document: every version of its key, their sections and chunks."""
        return forget(self.store, tenant, "document", id_, by)

    def forget_fact(self, tenant: str, id_: str, by: str | None = None) -> ForgetReport:
        """Forget one fact and the facts resting only on it; the facts it superseded stay
        closed."""
        return forget(self.store, tenant, "fact", id_, by)

    def llm_usage(self, tenant: str, since: date | None = None,
                  until: date | None = None) -> UsageReport:
        """The tenant's LLM calls per UTC day, operation and model, and totals per operation."""
        rows = UsageStore(self.store).list(tenant, since, until)
        return UsageReport.of([UsageDay.model_validate(r) for r in rows])

    # --- recall -------------------------------------------------------------------------------
    def recipe(self, method: Method = DEFAULT_METHOD, preset: str | None = None) -> Recipe:
        """The named recipe of ``method`` under ``preset`` (default: the configured one) on this
        server: with a sparse model, its recall list is on; the learned re-ranking uses the
        rankers of the configured embedding, and is off under one that has none."""
        embedding = rerank.embedder_key(self.settings.embedder, self.settings.embedding_unit)
        return recipes.recipe(method, preset or self.settings.retrieval_preset).served(
            embedding, self.sparse is not None, rerank.serves(embedding))

    @metrics.observe_search
    def search(
        self, tenant: str, req: SearchRequest, recipe: Recipe | None = None, *,
        embedder: Embedder | None = None, timings: dict[str, float] | None = None,
    ) -> SearchResult:
        """``embedder``: the model to embed the query with (default: this Memory's); `context`
        passes one `QueryMemo` to its searches so the question is embedded once. ``timings``:
        milliseconds per stage are added to it (`graphmem.retrieval.search.STAGES`)."""
        recipe = recipe or self.recipe(req.method, req.preset)
        runtime = Runtime(embedder or self.embedder, self._pool, self.sparse,
                          self._decider(recipe) if req.method == "iterative" else None)
        stores = Stores(self.store.tenant(tenant), FactStore(self.store, tenant),
                        EpisodeStore(self.store, tenant))
        with tenant_scope(tenant):  # the decider's LLM calls are the tenant's
            return search(stores, recipe, req, runtime, timings)

    def _decider(self, recipe: Recipe) -> Decider:
        """The decider of method iterative (`Settings.iterative_decider`); one LLM client."""
        llm = self.settings.llm()
        if self.settings.iterative_decider == "offline" or (
                self.settings.iterative_decider == "auto" and not llm.enabled):
            return OfflineDecider(lists_only=not recipe.iterative.iterative_every_question)
        if self._decide_llm is None:
            self._decide_llm = LLMClient(llm, sink=tenant_sink(UsageStore(self.store).record))
        return LLMDecider(self._decide_llm, recipe.iterative.iterative_shown)

    # --- for agents: the context to put in a prompt, and answers from it ------------------------
    def context(self, tenant: str, req: ContextRequest) -> ContextResult:
        """Messages, episodes and facts valid at ``req.as_of``, and with unit ``skill`` the top
        skills valid then, each with its sources, packed within ``req.max_tokens``
        (`graphmem.retrieval.packing`)."""
        self.recipe(DEFAULT_METHOD, req.preset)  # an unknown preset fails before any search
        memo = QueryMemo(self.embedder)

        def searches(reqs: Sequence[SearchRequest]) -> list[SearchResult]:
            """The unit searches side by side (the first on this thread); the query is embedded
            once, by whichever gets to it first (`QueryMemo`)."""
            later = [self._units.submit(self.search, tenant, r, None, embedder=memo)
                     for r in reqs[1:]]
            first = [self.search(tenant, reqs[0], None, embedder=memo)] if reqs else []
            return first + [f.result() for f in later]

        now = datetime.now(UTC)
        skill = None
        if "skill" in req.units:  # beside the unit searches
            skill = self._units.submit(self.procedural.search, tenant, SkillSearch(
                query=req.query, owner=req.owner, k=CONTEXT_SKILLS, cases_per_skill=SKILL_CASES,
                as_of=req.as_of or now), memo)

        def best_skill() -> list[Skill]:
            return skill.result().skills if skill is not None else []

        return packing.build(searches, req, req.method or DEFAULT_METHOD, now, best_skill)

    def answer(self, tenant: str, req: AnswerRequest) -> AnswerResult:
        """The reader's answer to ``req.query`` from its packed context, citing its items.
        `ReaderNotConfigured` (501) without an LLM; `LLMFailure` (502) when the model gave no
        usable reply."""
        if self.reader is None:
            raise ReaderNotConfigured()
        return self.reader.answer(tenant, self.context(tenant, req))


def _message(row: dict[str, Any]) -> Message:
    meta = json.loads(row.pop("metadata_json", None) or "{}")
    return Message(**row, metadata=meta)
