"""`Parts`: what one graphmem process holds: the settings, the store, the embedding model (and
the sparse one), the thread pools and the services (facts, procedural memory, documents,
formation, the reader), opened and closed together. Nothing here takes a tenant: one tenant's
memory is `graphmem.tenant_memory.TenantMemory`, which `Memory.for_tenant` makes."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Self

from graphmem.answer.reader import Reader
from graphmem.config import Settings
from graphmem.documents.service import Documents
from graphmem.embedders.sparse import sparse_encoder
from graphmem.embeddings import Embedder, LazyEmbedder, embedder_for
from graphmem.facts.service import Facts
from graphmem.formation.run import Former
from graphmem.jobs import JobQueue
from graphmem.llm.client import LLMClient
from graphmem.llm.usage import tenant_sink
from graphmem.messages.ingest import Ingestor
from graphmem.models import (
    Method,
)
from graphmem.procedural.service import Procedural
from graphmem.retrieval import Recipe, recipes, rerank
from graphmem.retrieval.deciders import LLMDecider, OfflineDecider
from graphmem.retrieval.iterative import Decider
from graphmem.store import Store
from graphmem.store.jobs import JobStore
from graphmem.store.usage import UsageStore

DEFAULT_METHOD: Method = "rrf_expand"
"""The search method of a context when neither the request nor the preset names one."""
SKILL_CASES = 3
CONTEXT_SKILLS = 3
"""The top skills a context with unit ``skill`` brings (best first)."""
"""The supporting cases a context's skill brings as its sources."""


class Parts:
    """The parts of long-term memory over one Neo4j database. Thread-safe; one per process."""

    def __init__(self, settings: Settings, store: Store, embedder: Embedder) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.ingestor = Ingestor(settings, embedder)
        self.facts = Facts(settings, embedder)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphmem-search")
        self.procedural = Procedural.for_settings(settings, store, embedder, self._pool)
        self.documents = Documents(settings, embedder, self._pool,
                                   llm=self.procedural.llm)  # the same client, when configured
        self.sparse = sparse_encoder(settings.sparse, settings.embedding_cache_dir)
        self.former = Former.for_settings(settings, store, embedder, self.facts, self.sparse)
        # a context request's unit searches, side by side; apart from _pool, whose tasks (index
        # queries) never wait on others, so a unit search may wait on _pool without deadlock
        self.units = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphmem-units")
        self._decide_llm: LLMClient | None = None
        self.reader = Reader.for_settings(settings, store)

    @property
    def search_pool(self) -> Executor:
        """The pool a search runs its index queries in (for benchmarks that run a search's
        stages themselves)."""
        return self._pool

    @classmethod
    def open(cls, settings: Settings, *, apply_schema: bool = True,
             lazy_model: bool = False) -> Self:
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
        self.units.shutdown(wait=False)
        if self.reader is not None:
            self.reader.close()
        if self._decide_llm is not None:
            self._decide_llm.close()
        self.store.close()

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
        return {r["name"]: r["state"] for r in self.store.run("queries/server/index_states")}

    def job_counts_all(self, states: Iterable[str], cap: int) -> dict[str, int]:
        """Jobs per state over every tenant, each capped at ``cap``."""
        return JobStore(self.store).counts_all(states, cap)

    # --- recall ---------------------------------------------------------------------------
    def recipe(self, method: Method = DEFAULT_METHOD, preset: str | None = None) -> Recipe:
        """The named recipe of ``method`` under ``preset`` (default: the configured one) on this
        server: with a sparse model, its recall list is on; the learned re-ranking uses the
        rankers of the configured embedding, and is off under one that has none."""
        embedding = rerank.embedder_key(self.settings.embedder, self.settings.embedding_unit)
        return recipes.recipe(method, preset or self.settings.retrieval_preset).served(
            embedding, self.sparse is not None, rerank.serves(embedding))

    def decider(self, recipe: Recipe) -> Decider:
        """The decider of method iterative (`Settings.iterative_decider`); one LLM client."""
        llm = self.settings.llm()
        if self.settings.iterative_decider == "offline" or (
                self.settings.iterative_decider == "auto" and not llm.enabled):
            return OfflineDecider(lists_only=not recipe.iterative.iterative_every_question)
        if self._decide_llm is None:
            self._decide_llm = LLMClient(llm, sink=tenant_sink(UsageStore(self.store).record))
        return LLMDecider(self._decide_llm, recipe.iterative.iterative_shown)
