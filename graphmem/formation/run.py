"""Forming a session: its messages not yet in an episode become episodes (or extend the episode
they continue), its turn windows (`graphmem.formation.windows`) are brought up to date, and, with
a sparse model (``GRAPHMEM_SPARSE``), its messages get their learned-sparse word pieces.
Idempotent and incremental: a message is in exactly one episode, ever; a window is rebuilt only
where a late message changed the turns it covers. Runs as a `form_session` job (see
`graphmem.ops.worker`), never on the request path."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from graphmem import metrics
from graphmem.config import Settings
from graphmem.embedders.sparse import SparseEncoder
from graphmem.embeddings import Embedder
from graphmem.facts.service import Facts
from graphmem.formation import extract
from graphmem.formation.episodes import Draft, ExtractiveNarrator, Narrator, draft, episode_id
from graphmem.formation.llm_episodes import LLMFinder, LLMNarrator
from graphmem.formation.observer import (
    OVERLAP,
    WINDOW,
    BoundaryFinder,
    HeuristicFinder,
    Turn,
    mean,
    segment,
)
from graphmem.formation.sparse import give_pieces
from graphmem.formation.windows import WindowTurn, plan_windows
from graphmem.llm.client import LLMClient
from graphmem.llm.usage import tenant_scope, tenant_sink
from graphmem.store import Store, TenantStores
from graphmem.store.usage import UsageStore
from graphmem.store.windows import WindowStore

EMBED_CHARS = 2000
CONTEXT = OVERLAP  # turns before a new stretch seen as context when judging a boundary there


@dataclass(frozen=True)
class FormationReport:
    owner: str
    session_id: str
    created: int
    extended: int
    messages: int
    windows: int = 0
    """Turn windows created (new, or rebuilt around a late message)."""
    sparse: int = 0
    """Messages given their learned-sparse word pieces (only with a sparse model)."""
    extraction: list[dict[str, Any]] = field(default_factory=list)
    """LLM path: one `ExtractionReport.summary` per episode extracted, with its ``episode``."""
    skipped: list[str] = field(default_factory=list)
    """Episodes not written: one of their messages was forgotten meanwhile (the forgetting
    enqueued this session's formation again)."""


def _compared(rows: list[dict[str, Any]]) -> list[str]:
    """The messages whose vectors formation may compare: every one not in an episode yet, and
    the two before each such stretch (the context `Former._boundary_at` looks at)."""
    ids: dict[str, None] = {}
    for n, r in enumerate(rows):
        if r["episode"] is None:
            ids.update((p["id"], None) for p in rows[max(0, n - CONTEXT) : n + 1])
    return list(ids)


class Former:
    """Forms episodes with the given finder and narrator (heuristic and extractive by default);
    with an LLM client and the facts service, also extracts observations and profile operations
    from every episode it creates or extends, through the Linker."""

    def __init__(self, store: Store, embedder: Embedder, finder: BoundaryFinder | None = None,
                 narrator: Narrator | None = None, llm: LLMClient | None = None,
                 facts: Facts | None = None, sparse: SparseEncoder | None = None) -> None:
        self._usage = UsageStore(store)
        self.sparse = sparse
        self._embedder = embedder
        self.finder = finder or HeuristicFinder()
        self.narrator = narrator or ExtractiveNarrator()
        self._llm = llm
        self._facts = facts

    @classmethod
    def for_settings(cls, settings: Settings, store: Store, embedder: Embedder,
                     facts: Facts, sparse: SparseEncoder | None = None) -> Former:
        """LLM path when an endpoint is configured, the no-LLM path otherwise. Every LLM call
        is added to the tenant's usage in Neo4j as it ends (`graphmem.store.usage`)."""
        llm_settings = settings.llm()
        if not llm_settings.enabled:
            return cls(store, embedder, sparse=sparse)
        client = LLMClient(llm_settings, sink=tenant_sink(UsageStore(store).record))
        return cls(store, embedder, LLMFinder(client), LLMNarrator(client), client, facts,
                   sparse)

    def form(self, stores: TenantStores, owner: str, session_id: str) -> FormationReport:
        """Form (or extend) the session's episodes and extract facts from the new ones; LLM
        calls made here are the tenant's (usage accounting)."""
        with tenant_scope(stores.tenant):
            rows = stores.episodes.session_turns(owner, session_id)
            report = self._form(stores, owner, session_id, rows)
            return replace(report, windows=self._windows(stores.windows, owner, session_id, rows),
                           sparse=self._sparse(stores, owner, session_id))

    def _sparse(self, stores: TenantStores, owner: str, session_id: str) -> int:
        """With a sparse model: the session's messages lacking its word pieces get them."""
        if self.sparse is None:
            return 0
        return give_pieces(stores.sparse, self.sparse, owner, session_id)

    def _windows(self, store: WindowStore, owner: str, session_id: str,
                 rows: list[dict[str, Any]]) -> int:
        """Bring the session's turn windows up to date with ``rows`` (its turns in chain order):
        embed and create the missing ones, delete the stale ones. Returns how many were created
        (0 when a message arrived meanwhile: its own job rebuilds)."""
        turns = [WindowTurn(r["id"], r["speaker"], r["text"], r["timestamp"]) for r in rows]
        wanted = plan_windows(owner, session_id, turns)
        have = store.session_ids(owner, session_id)
        missing = [w for w in wanted if w.id not in have]
        if not missing and have <= {w.id for w in wanted}:
            return 0
        vectors = self._embedder.embed([w.text for w in missing]) if missing else []
        fresh = [w.row(v) for w, v in zip(missing, vectors, strict=True)]
        done = store.replace(owner, session_id, len(rows), [w.id for w in wanted], fresh,
                             datetime.now(UTC))
        return 0 if done is None else len(fresh)

    def _form(self, stores: TenantStores, owner: str, session_id: str,
              rows: list[dict[str, Any]]) -> FormationReport:
        episodes = stores.episodes
        owner_of = {r["id"]: r["episode"] for r in rows}
        compared = episodes.turn_vectors(_compared(rows))
        turns = [Turn(r["id"], r["speaker"], r["text"], r["timestamp"],
                      mean(compared.get(r["id"], []))) for r in rows]
        plans = self._plan(owner, session_id, turns, owner_of)
        if not plans:
            done = self._extract(stores, owner, session_id)
            return FormationReport(owner, session_id, 0, 0, 0, extraction=done)
        texts = [f"{d.title}\n{d.narrative}"[:EMBED_CHARS] for _, d in plans]
        vectors = self._embedder.embed(texts)
        writes = [{"id": id_, "message_ids": d.turn_ids,
                   "props": _props(owner, session_id, d, text, vector)}
                  for (id_, d), text, vector in zip(plans, texts, vectors, strict=True)]
        skipped = episodes.write(owner, session_id, writes, datetime.now(UTC))
        done = self._extract(stores, owner, session_id)
        written = [(id_, d) for id_, d in plans if id_ not in skipped]
        extended = sum(1 for id_, _ in written if id_ in owner_of.values())
        fresh = sum(1 for _, d in written for t in d.turn_ids if owner_of[t] is None)
        return FormationReport(owner, session_id, len(written) - extended, extended, fresh,
                               extraction=done, skipped=skipped)

    def _extract(self, stores: TenantStores, owner: str,
                 session_id: str) -> list[dict[str, Any]]:
        """LLM path: extract facts from every episode of the session not extracted yet (new,
        extended, or left over by a failed run: a failure raises, and the job retries). Each
        outcome (proposed, kept, dropped by reason) goes on the episode, into the usage
        counters and into the returned list."""
        if self._llm is None or self._facts is None:
            return []
        done: list[dict[str, Any]] = []
        profile = {f.type: f.content or "" for f in self._facts.query(stores, "profile", owner)}
        episodes = stores.episodes
        for row in episodes.unextracted(owner, session_id):
            stretch = [Turn(m["id"], m["speaker"], m["text"], m["timestamp"])
                       for m in row["messages"]]
            found = extract.extract(self._llm, owner, stretch, profile)
            summary = extract.apply(self._facts, stores, owner, stretch, found,
                                    self._embedder.embed).summary()
            episodes.mark_extracted(row["id"], self._llm.model, datetime.now(UTC), summary)
            self._usage.record_extraction(stores.tenant, extract.OPERATION,
                                                      self._llm.model, summary)
            metrics.record_extraction(summary)
            done.append({"episode": row["id"], **summary})
        return done

    def _plan(self, owner: str, session_id: str, turns: list[Turn],
              owner_of: dict[str, str | None]) -> list[tuple[str, Draft]]:
        """(episode id, draft) for every episode to create or extend."""
        members: dict[str, list[Turn]] = {}
        for t in turns:
            if owner_of[t.id] is not None:
                members.setdefault(owner_of[t.id] or "", []).append(t)
        touched: dict[str, list[Turn]] = {}
        i = 0
        while i < len(turns):
            if owner_of[turns[i].id] is not None:
                i += 1
                continue
            j = i
            while j < len(turns) and owner_of[turns[j].id] is None:
                j += 1
            segments = segment(turns[i:j], self.finder)
            before = owner_of[turns[i - 1].id] if i > 0 else None
            if before is not None and not self._boundary_at(turns, i):
                touched[before] = members[before] = [*members[before], *segments.pop(0)]
            for seg in segments:
                touched[episode_id(owner, session_id, seg[0].id)] = seg
            i = j
        position = {t.id: n for n, t in enumerate(turns)}
        session = {**members, **touched}  # every episode of the session: titles contrast them
        return [(id_, draft(sorted(ts, key=lambda t: position[t.id]), self.narrator,
                            [o for other, o in session.items() if other != id_]))
                for id_, ts in touched.items()]

    def _boundary_at(self, turns: list[Turn], i: int) -> bool:
        """Does a new episode start at turn i, seen with the two turns before it as context?"""
        start = max(0, i - CONTEXT)
        window = turns[start : start + WINDOW]
        return (i - start) in self.finder.find(window, i - start)


def _props(owner: str, session_id: str, d: Draft, text: str, vector: list[float]
           ) -> dict[str, Any]:
    return {
        "owner": owner, "session_id": session_id, "title": d.title, "narrative": d.narrative,
        "participants": d.participants, "reported_at": d.reported_at,
        "reported_until": d.reported_until, "occurred_at": d.occurred_at,
        "occurred_until": d.occurred_until, "formed_by": d.formed_by,
        "message_count": len(d.turn_ids), "search_text": text, "embedding": vector,
        "caption": d.title,
    }


def form_session(former: Former, stores: TenantStores, job: Any) -> dict[str, Any]:
    """Job handler for kind ``form_session`` (payload: owner, session_id), given the worker's
    `Former` and the stores of the job's tenant; its report is the job's result."""
    payload = job.payload
    return asdict(former.form(stores, payload["owner"], payload["session_id"]))
