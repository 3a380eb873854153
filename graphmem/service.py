"""`Memory`: the library's front door. The API, the CLI and the benchmark all go through it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any

from graphmem import metrics
from graphmem.config import Settings
from graphmem.embeddings import Embedder, embedder_for
from graphmem.errors import NotFound
from graphmem.facts.service import Facts
from graphmem.formation.run import Former
from graphmem.ingest import Ingestor
from graphmem.jobs import JobQueue
from graphmem.llm.usage import UsageDay, UsageReport
from graphmem.models import (
    DeleteReport,
    IngestReport,
    Message,
    MessageIn,
    SearchRequest,
    SearchResult,
)
from graphmem.procedural.service import Procedural
from graphmem.retrieval import RetrievalSettings, preset
from graphmem.retrieval.search import search
from graphmem.store import Store
from graphmem.store.episodes import EpisodeStore
from graphmem.store.facts import FactStore
from graphmem.store.usage import UsageStore


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
        self.procedural = Procedural(settings, store, embedder)
        self.former = Former.for_settings(settings, store, embedder, self.facts)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphmem-search")

    @classmethod
    def open(cls, settings: Settings, *, apply_schema: bool = True) -> Memory:
        embedder = embedder_for(settings)
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
        self.store.close()

    @property
    def jobs(self) -> JobQueue:
        """The durable queue of background work (formation)."""
        return JobQueue(self.store)

    def ensure_schema(self) -> None:
        self.store.apply_schema(self.embedder.name, self.embedder.dimensions)

    # --- messages -----------------------------------------------------------------------------
    @metrics.observe_ingest
    def ingest(self, tenant: str, messages: list[MessageIn]) -> IngestReport:
        return self._ingestor.ingest(self.store.tenant(tenant), messages)

    @metrics.observe_ingest_many
    def ingest_many(
        self, tenant: str, batches: Iterable[list[MessageIn]]
    ) -> Iterator[IngestReport]:
        """Bulk ingest, embedding the next batch while the previous one commits."""
        return self._ingestor.ingest_many(self.store.tenant(tenant), batches)

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

    def delete_owner(self, tenant: str, owner: str) -> DeleteReport:
        removed = self.store.tenant(tenant).delete_owner(owner)
        return DeleteReport(owner=owner, **removed)

    def llm_usage(self, tenant: str, since: date | None = None,
                  until: date | None = None) -> UsageReport:
        """The tenant's LLM calls per UTC day, operation and model, and totals per operation."""
        rows = UsageStore(self.store).list(tenant, since, until)
        return UsageReport.of([UsageDay.model_validate(r) for r in rows])

    # --- recall -------------------------------------------------------------------------------
    def retrieval_settings(self, name: str | None = None) -> RetrievalSettings:
        return preset(name or self.settings.retrieval_preset)

    @metrics.observe_search
    def search(
        self, tenant: str, req: SearchRequest, rs: RetrievalSettings | None = None
    ) -> SearchResult:
        rs = rs or self.retrieval_settings(req.preset)
        return search(self.store.tenant(tenant), FactStore(self.store, tenant),
                      EpisodeStore(self.store, tenant), self.embedder, req, rs, self._pool)


def _message(row: dict[str, Any]) -> Message:
    meta = json.loads(row.pop("metadata_json", None) or "{}")
    return Message(**row, metadata=meta)
