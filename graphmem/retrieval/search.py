"""One search: recall lists from the store, fusion, expansion, chronological packing."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from datetime import UTC, datetime
from itertools import pairwise, zip_longest
from typing import Any

from graphmem import temporal
from graphmem.embeddings import Embedder
from graphmem.models import EpisodeHit, FactHit, Hit, SearchRequest, SearchResult, UnitRef
from graphmem.retrieval.context import estimate_tokens, render, render_facts
from graphmem.retrieval.expansion import Selected, clusters, select
from graphmem.retrieval.fulltext import lucene_escape
from graphmem.retrieval.fusion import Fused, rrf
from graphmem.retrieval.settings import RetrievalSettings
from graphmem.store import Filters, TenantStore
from graphmem.store.core import Row
from graphmem.store.episodes import EpisodeStore
from graphmem.store.facts import FactStore


def candidates(req: SearchRequest, rs: RetrievalSettings) -> int:
    """How many hits each recall list contributes: the preset's under a message budget; for k
    nuclei, 3k (at least 20): ranks beyond that barely move the top k of the fusion."""
    if _budget(req, rs) is not None:
        return rs.candidates
    return min(rs.candidates, max(3 * req.k, 20))


def _budget(req: SearchRequest, rs: RetrievalSettings) -> int | None:
    """Messages to return after expansion: the request's, else the preset's (None: no cap)."""
    return req.max_messages if req.max_messages is not None else rs.max_messages


def recall_lists(
    store: TenantStore, embedder: Embedder, req: SearchRequest, rs: RetrievalSettings,
    pool: Executor | None = None,
) -> tuple[dict[str, list[str]], list[float] | None]:
    """The ranked message id lists the method asks for (``vector`` and/or ``fulltext``), and the
    query vector. With a pool, the fulltext query runs while the query is being embedded."""
    filters = Filters(req.session_id, req.time_from, req.time_to)
    query = lucene_escape(req.query) if req.method != "vector" else ""
    n = candidates(req, rs)

    def fulltext() -> list[tuple[str, float]]:
        if not query:
            return []
        return store.fulltext_search(req.owner, query, n, rs.overfetch, filters)

    pending = pool.submit(fulltext) if pool is not None else None
    lists: dict[str, list[str]] = {}
    vector = embedder.embed([req.query])[0] if req.method != "fulltext" else None
    if vector is not None:
        hits = store.vector_search(req.owner, vector, n, rs.overfetch, filters)
        lists["vector"] = [id_ for id_, _ in hits]
    if req.method != "vector":
        found = pending.result() if pending is not None else fulltext()
        lists["fulltext"] = [id_ for id_, _ in found]
    return lists, vector


def search(
    store: TenantStore, facts: FactStore, episodes: EpisodeStore, embedder: Embedder,
    req: SearchRequest, rs: RetrievalSettings, pool: Executor | None = None,
) -> SearchResult:
    if req.units not in ("messages", "both"):  # message recall embeds the query itself
        vector = embedder.embed([req.query])[0] if req.method != "fulltext" else None
        if req.units == "episodes":
            return _episodes(store, episodes, vector, req, rs)
        return pack(req, [], {}, set(), _observations(facts, vector, req, rs), rs.normalise_time)
    lists, vector = recall_lists(store, embedder, req, rs, pool)
    selected, records, links = _messages(store, lists, req, rs)
    observations = _observations(facts, vector, req, rs) if req.units == "both" else []
    return pack(req, selected, records, links, observations, rs.normalise_time)


def _messages(
    store: TenantStore, lists: dict[str, list[str]], req: SearchRequest, rs: RetrievalSettings
) -> tuple[list[Selected], dict[str, Row], set[tuple[str, str]]]:
    fused = _time_hint(store, req, rrf(lists, rs.rrf_k), lists, rs)
    budget = _budget(req, rs)
    nuclei = fused if budget is not None else fused[: req.k]
    if req.method == "rrf_expand" and nuclei:
        considered = nuclei[: budget if budget is not None else len(nuclei)]
        before = req.expand.before if req.expand is not None else rs.expand_before
        after = req.expand.after if req.expand is not None else rs.expand_after
        got = store.windows([n.id for n in considered], before, after)
        selected = select(nuclei, got.windows, budget, rs.neighbour_decay)
        return selected, got.records, got.links
    selected = select(nuclei, {}, budget, rs.neighbour_decay)
    records = {r["id"]: r for r in store.get_messages([s.id for s in selected])}
    return selected, records, set()


def _time_hint(store: TenantStore, req: SearchRequest, fused: list[Fused],
               lists: dict[str, list[str]], rs: RetrievalSettings) -> list[Fused]:
    """A query that names a time boosts (or keeps only) the candidates of that time: they form
    one more ranked list, in fused order, and the fusion runs again."""
    if req.time_hint == "off" or req.method in ("fulltext", "vector") or not fused:
        return fused  # a single-index method is that index alone
    span = temporal.query_range(req.query, req.as_of or datetime.now(UTC))
    if span is None:
        return fused
    inside = store.in_time_range([f.id for f in fused], *span)
    if req.time_hint == "restrict":
        return [f for f in fused if f.id in inside]
    return rrf({**lists, "time": [f.id for f in fused if f.id in inside]}, rs.rrf_k)


def _unit_fused(
    search: Callable[..., list[tuple[str, float]]], vector: list[float] | None,
    req: SearchRequest, rs: RetrievalSettings,
) -> list[Fused]:
    """Vector and fulltext recall over another unit (observations, episodes), fused by RRF;
    ``search(index, **params)`` runs one of the unit's two index queries."""
    lists: dict[str, list[str]] = {}
    if vector is not None:
        lists["vector"] = [i for i, _ in search("vector", vector=vector)]
    query = lucene_escape(req.query)
    if req.method != "vector" and query:
        lists["fulltext"] = [i for i, _ in search("fulltext", query=query)]
    return rrf(lists, rs.rrf_k)


def _episodes(
    store: TenantStore, episodes: EpisodeStore, vector: list[float] | None, req: SearchRequest,
    rs: RetrievalSettings,
) -> SearchResult:
    """Episodes as the unit: each hit brings all its source messages, which count against the
    budget (an episode that would overflow it is skipped; the first one is always kept)."""
    fused = _unit_fused(
        lambda index, **p: episodes.search(index, req.owner, rs.candidates, rs.overfetch, **p),
        vector, req, rs)
    budget = _budget(req, rs)
    limit = len(fused) if budget is not None else req.k
    rows = {r["e"]["id"]: r for r in episodes.get([f.id for f in fused[:limit]])}
    hits: list[EpisodeHit] = []
    selected: dict[str, Selected] = {}
    for f in fused[:limit]:
        row = rows.get(f.id)
        if row is None:
            continue
        fresh = [m for m in row["messages"] if m not in selected]
        if budget is not None and hits and len(selected) + len(fresh) > budget:
            continue
        fields = {k: v for k, v in row["e"].items() if k in EpisodeHit.model_fields}
        hits.append(EpisodeHit(**fields, score=f.score, rules=list(f.rules),  # type: ignore[arg-type]
                               messages=row["messages"]))
        selected.update((m, Selected(m, f.score, ("episode",), False)) for m in fresh)
        if budget is not None and len(selected) >= budget:
            break
    records = {r["id"]: r for r in store.get_messages(list(selected))}
    result = pack(req, list(selected.values()), records, _chained(hits), (), rs.normalise_time)
    return result.model_copy(update={"episodes": hits})


def _chained(hits: Sequence[EpisodeHit]) -> set[tuple[str, str]]:
    """An episode's messages are consecutive: they render as one block."""
    return {pair for h in hits for pair in pairwise(h.messages)}


def _observations(
    facts: FactStore, vector: list[float] | None, req: SearchRequest, rs: RetrievalSettings
) -> list[FactHit]:
    t = req.as_of or datetime.now(UTC)
    fused = _unit_fused(
        lambda index, **p: facts.search(index, req.owner, rs.candidates, rs.overfetch, t, **p),
        vector, req, rs)[: req.k]
    rows = {r["f"]["id"]: r for r in facts.get([f.id for f in fused])}
    return [
        FactHit(**{k: v for k, v in rows[f.id]["f"].items() if k in FactHit.model_fields},
                score=f.score, rules=list(f.rules),  # type: ignore[arg-type]
                sources=rows[f.id]["sources"])
        for f in fused if f.id in rows
    ]


def pack(
    req: SearchRequest,
    selected: Sequence[Selected],
    records: Mapping[str, Mapping[str, Any]],
    links: set[tuple[str, str]],
    observations: Sequence[FactHit] = (),
    normalise_time: bool = True,
) -> SearchResult:
    """Order the chosen messages in time, merge touching ones into clusters, interleave the
    ranked units, render the context (facts first, then one block per cluster)."""
    present = [s for s in selected if s.id in records]
    present.sort(key=lambda s: _order(records[s.id], s.id))
    hits = [
        Hit(
            id=s.id,
            text=records[s.id]["text"],
            speaker=records[s.id]["speaker"],
            timestamp=records[s.id]["timestamp"],
            session_id=records[s.id]["session_id"],
            owner=records[s.id]["owner"],
            score=s.score,
            rules=list(s.rules),  # type: ignore[arg-type]
            nucleus=s.nucleus,
        )
        for s in present
    ]
    by_id = {h.id: h for h in hits}
    runs = clusters([h.id for h in hits], links)
    blocks = [[by_id[i] for i in run] for run in runs]
    parts = [render_facts(observations), render(blocks, normalise_time)]
    context = "\n\n".join(p for p in parts if p)
    interleaved: list[UnitRef] = []
    if req.units == "both":
        nuclei = [s.id for s in sorted(present, key=lambda s: -s.score) if s.nucleus]
        for m, o in zip_longest(nuclei, [o.id for o in observations]):
            if m is not None:
                interleaved.append(UnitRef(unit="message", id=m))
            if o is not None:
                interleaved.append(UnitRef(unit="observation", id=o))
    return SearchResult(
        query=req.query, method=req.method, hits=hits, observations=list(observations),
        interleaved=interleaved, context=context, context_tokens=estimate_tokens(context),
    )


def _order(record: Mapping[str, Any], id_: str) -> tuple[Any, ...]:
    """Event time, then the order of arrival: the same order as the NEXT chain."""
    return (record["timestamp"], record["session_id"], record.get("recorded_at") or 0,
            record.get("batch_index") or 0, id_)


__all__ = ["Fused", "pack", "recall_lists", "search"]
