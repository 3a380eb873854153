"""The ablation of `rrf_windows`' recall lists on LoCoMo: each list (window sizes, window
indexes) switched off in turn, and the fusion choices (split window votes, matched-only
crediting, the session prior) flipped, recall per budget and category.

Exact and cheap: per question, every recall list is read once (with the widest plan), and each
variant then runs the same pure fusion, selection and expansion as `Memory.search` on its subset
of the lists; the store's reads after recall (sessions, time ranges, NEXT windows) are cached per
question, so a variant costs no extra round trips. The variant ``all`` equals the method
``rrf_windows`` and ``none`` equals ``rrf_expand`` (the benchmark reports both as a check)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from graphmem.bench.units import Probe, evidence_recall
from graphmem.models import SearchRequest
from graphmem.progress import track
from graphmem.retrieval.plan import resolve
from graphmem.retrieval.recipes import Recipe
from graphmem.retrieval.search import message_lists, select_messages
from graphmem.service import Memory
from graphmem.store import TenantStore, Windows

VARIANTS: dict[str, dict[str, Any]] = {
    "all": {},
    "no_split": {"window_split": False},
    "matched_only": {"window_matched_only": True},
    "session": {"session_prior": True},
    "unsplit_session": {"window_split": False, "session_prior": True},
    "no_windows": {"window_sizes": (), "ranker": "rrf_expand"},
    "no_window3": {"window_sizes": (5,)},
    "no_window5": {"window_sizes": (3,)},
    "no_window_vector": {"window_indexes": ("fulltext",)},
    "no_window_fulltext": {"window_indexes": ("vector",)},
    "none": {"window_sizes": (), "session_prior": False, "ranker": "rrf_expand"},
}
"""``all`` is `rrf_windows` as it runs; ``unsplit_session`` is its earlier form (every window
list weighing 1, with the session prior); ``none`` is ``rrf_expand`` (re-ranked by its ranker,
as are ``no_windows``; the other variants without windows of both sizes and both indexes have
no ranker trained on their lists and keep the fused order)."""


class CachedReads(TenantStore):
    """A `TenantStore` whose post-recall reads are cached (one question at a time)."""

    def __init__(self, store: TenantStore) -> None:
        super().__init__(store._store, store.tenant)
        self._sessions: dict[str, str] = {}
        self._asked_sessions: set[str] = set()
        self._inside: dict[tuple[datetime, datetime], dict[str, bool]] = {}
        self._windows: dict[tuple[int, int, datetime | None], Windows] = {}

    def sessions_of(self, ids: list[str]) -> dict[str, str]:
        missing = [i for i in ids if i not in self._asked_sessions]
        if missing:
            self._sessions.update(super().sessions_of(missing))
            self._asked_sessions.update(missing)
        return {i: self._sessions[i] for i in ids if i in self._sessions}

    def in_time_range(self, ids: list[str], start: datetime, end: datetime) -> set[str]:
        known = self._inside.setdefault((start, end), {})
        missing = [i for i in ids if i not in known]
        if missing:
            inside = super().in_time_range(missing, start, end)
            known.update((i, i in inside) for i in missing)
        return {i for i in ids if known[i]}

    def windows(self, ids: list[str], before: int, after: int,
                as_of: datetime | None = None) -> Windows:
        seen = self._windows.setdefault((before, after, as_of), Windows())
        missing = [i for i in ids if i not in seen.windows]
        if missing:
            got = super().windows(missing, before, after, as_of)
            seen.windows.update(got.windows)
            seen.links.update(got.links)
            seen.records.update(got.records)
        return Windows({i: seen.windows[i] for i in ids if i in seen.windows}, seen.links,
                       seen.records)


def ablation(mem: Memory, tenant: str, probes: Sequence[Probe], rs: Recipe,
             budgets: Sequence[int], categories: Sequence[int],
             stop: threading.Event | None = None) -> dict[str, Any]:
    """Recall of every variant of `VARIANTS`, overall and per category, by budget."""
    widest = rs.for_method("rrf_windows").with_(window_sizes=(3, 5),
                                                window_indexes=("vector", "fulltext"))
    recall = {v: {b: [0.0] * len(probes) for b in budgets} for v in VARIANTS}
    for n, p in enumerate(track(probes, "questions (ablation)")):
        if stop is not None and stop.is_set():
            raise RuntimeError("stopped")
        store = CachedReads(mem.store.tenant(tenant))
        now = datetime.now(UTC)
        req = SearchRequest(query=p.query, owner=p.owner, method="rrf_windows",
                            max_messages=max(budgets))
        lists = message_lists(store, mem.embedder, resolve(req, widest, now),
                              sparse=mem.sparse)
        for v, changes in VARIANTS.items():
            for b in budgets:
                plan = resolve(req.model_copy(update={"max_messages": b}),
                               widest.with_(**changes), now)
                selected, records, _ = select_messages(
                    store, {name: lists[name] for name in plan.lists}, plan)
                recall[v][b][n] = evidence_recall(p.gold,
                                                  [s.id for s in selected if s.id in records])
    out: dict[str, Any] = {}
    for v in VARIANTS:
        by_cat = {str(c): {str(b): _mean([recall[v][b][i] for i, p in enumerate(probes)
                                          if p.category == c]) for b in budgets}
                  for c in categories}
        out[v] = {"changes": {k: list(x) if isinstance(x, tuple) else x
                              for k, x in VARIANTS[v].items()},
                  "recall": {str(b): _mean(recall[v][b]) for b in budgets},
                  "recall_by_category": by_cat}
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
