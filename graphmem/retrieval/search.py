"""One search: recall lists from the store, fusion, expansion, chronological packing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphmem.embeddings import Embedder
from graphmem.models import Hit, SearchRequest, SearchResult
from graphmem.retrieval.context import estimate_tokens, render
from graphmem.retrieval.expansion import Selected, clusters, select
from graphmem.retrieval.fulltext import lucene_escape
from graphmem.retrieval.fusion import Fused, rrf
from graphmem.retrieval.settings import RetrievalSettings
from graphmem.store import Filters, TenantStore


def recall_lists(
    store: TenantStore, embedder: Embedder, req: SearchRequest, rs: RetrievalSettings
) -> dict[str, list[str]]:
    """The ranked id lists the method asks for: ``vector`` and/or ``fulltext``."""
    filters = Filters(req.session_id, req.time_from, req.time_to)
    lists: dict[str, list[str]] = {}
    if req.method != "fulltext":
        vector = embedder.embed([req.query])[0]
        hits = store.vector_search(req.owner, vector, rs.candidates, rs.overfetch, filters)
        lists["vector"] = [id_ for id_, _ in hits]
    if req.method != "vector":
        query = lucene_escape(req.query)
        hits = (
            store.fulltext_search(req.owner, query, rs.candidates, rs.overfetch, filters)
            if query
            else []
        )
        lists["fulltext"] = [id_ for id_, _ in hits]
    return lists


def search(
    store: TenantStore, embedder: Embedder, req: SearchRequest, rs: RetrievalSettings
) -> SearchResult:
    lists = recall_lists(store, embedder, req, rs)
    fused = rrf(lists, rs.rrf_k)
    budget = req.max_messages if req.max_messages is not None else rs.max_messages
    nuclei = fused if budget is not None else fused[: req.k]
    windows: dict[str, list[str]] = {}
    links: set[tuple[str, str]] = set()
    if req.method == "rrf_expand" and nuclei:
        considered = nuclei[: budget if budget is not None else len(nuclei)]
        windows, links = store.windows(
            [n.id for n in considered], req.expand.before, req.expand.after
        )
    selected = select(nuclei, windows, budget, rs.neighbour_decay)
    records = {r["id"]: r for r in store.get_messages([s.id for s in selected])}
    return pack(req, selected, records, links)


def pack(
    req: SearchRequest,
    selected: Sequence[Selected],
    records: Mapping[str, Mapping[str, Any]],
    links: set[tuple[str, str]],
) -> SearchResult:
    """Order the chosen messages in time, merge touching clusters, render the context."""
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
    context = render([[by_id[i] for i in run] for run in runs])
    return SearchResult(
        query=req.query, method=req.method, hits=hits, context=context,
        context_tokens=estimate_tokens(context),
    )


def _order(record: Mapping[str, Any], id_: str) -> tuple[Any, ...]:
    """Event time, then the order of arrival: the same order as the NEXT chain."""
    return (record["timestamp"], record["session_id"], record.get("recorded_at") or 0,
            record.get("batch_index") or 0, id_)


__all__ = ["Fused", "pack", "recall_lists", "search"]
