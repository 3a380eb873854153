"""One search as a pipeline: the request resolved with its recipe (`graphmem.retrieval.recipes`)
into a `Plan`, the query embedded once, one
retriever per unit giving ranked lists, pure fusion (with the time and session lists), pure
expansion and selection, packing: the hits best first (or in time), each with the turns
around it, and the context rendered in time. Given a ``timings`` map, a search adds the
milliseconds of each stage to it (`STAGES`); without one, nothing is timed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import pairwise, zip_longest
from time import perf_counter
from typing import Any, Protocol

from graphmem.embedders.sparse import QUERY_TOP, SparseEncoder, query_text
from graphmem.embeddings import Embedder, QueryMemo, query_vectors
from graphmem.entities.extract import query_mentions
from graphmem.messages import metadata, temporal
from graphmem.messages.metadata import Condition
from graphmem.models import EpisodeHit, FactHit, Hit, SearchRequest, SearchResult, Turn, UnitRef
from graphmem.retrieval import graph
from graphmem.retrieval.context import estimate_tokens, render, render_facts
from graphmem.retrieval.expansion import Selected, clusters, select, select_heads
from graphmem.retrieval.fusion import Fused, Ranked, credit, fuse, session_prior
from graphmem.retrieval.graph import GraphWalk, Neighbourhood
from graphmem.retrieval.iterative import Decider
from graphmem.retrieval.iterative_search import iterative_messages
from graphmem.retrieval.plan import Plan, resolve, window_size
from graphmem.retrieval.recipes import Recipe
from graphmem.retrieval.rerank import rerank
from graphmem.retrieval.retrievers import (
    Candidate,
    EpisodeRetriever,
    FactRetriever,
    Query,
    Retriever,
    SentenceRetriever,
    WindowRetriever,
    index_of,
)
from graphmem.store.core import Row
from graphmem.store.entities import EntityStore
from graphmem.store.episodes import EpisodeStore
from graphmem.store.facts import FactStore
from graphmem.store.tenant import Filters, TenantStore, Windows
from graphmem.store.windows import WindowStore

Timings = dict[str, float]
STAGES = ("plan", "embed", "vector", "fulltext", "hybrid", "fusion", "time_range", "expansion",
          "rerank", "select", "pack")
"""The stages `search` times (one-shot methods; a window list is timed under its own name, e.g.
``window3_fulltext``): resolving the plan, embedding the query, each index query (a round
trip; ``hybrid``: ``vector`` and ``fulltext`` in one, see `message_lists`), fusion, the
time-range check of a query that names a time (a round trip), the neighbours' fetch (a round
trip; with the learned re-ranking, the windows of every candidate it re-ranks when they are
few, see `SHARED_READ`), the learned re-ranking (the model, and else the messages it reads, a
round trip), selection, packing the result; with a sparse model also `SPARSE_STAGES`."""
SHARED_READ = 10
"""The learned re-ranking reads the windows of every candidate it re-ranks, in one query, when
they are at most this many more than the heads that keep their windows; else the messages of
those candidates, then the heads' windows (two queries). The windows of ten more cost about a
round trip: on LoCoMo dev, windows of 20 took 3.0 ms against 3.5 for the messages of 20 and the
windows of 10; windows of 50 took 6.2 against 4.0 for the messages of 50 and the windows of 10."""
SPARSE_STAGES = ("sparse_embed", "sparse")
"""With a sparse model: encoding the query into word pieces, and the sparse index query (both
in the pool, beside the query's embedding)."""


def lap(timings: Timings | None, stage: str, since: float) -> float:
    """Add the milliseconds since ``since`` to ``stage``; returns the time now. Without
    ``timings``, does nothing (returns 0)."""
    if timings is None:
        return 0.0
    now = perf_counter()
    timings[stage] = timings.get(stage, 0.0) + (now - since) * 1000
    return now


def clock(timings: Timings | None) -> float:
    """The time to time from: 0 when nothing is timed."""
    return perf_counter() if timings is not None else 0.0


class Stores(Protocol):
    """The tenant's stores a search reads (`graphmem.store.TenantStores` has them)."""

    @property
    def messages(self) -> TenantStore: ...
    @property
    def facts(self) -> FactStore: ...
    @property
    def episodes(self) -> EpisodeStore: ...


@dataclass(frozen=True)
class Runtime:
    """What a search runs with besides the stores: the query's embedder, the pool the recall
    lists run side by side in (None: one after the other), the sparse model (needed when the
    recipe has the learned-sparse list) and method ``iterative``'s decider (default: the offline
    one)."""

    embedder: Embedder
    pool: Executor | None = None
    sparse: SparseEncoder | None = None
    decider: Decider | None = None


def search(stores: Stores, recipe: Recipe, req: SearchRequest, runtime: Runtime,
           timings: Timings | None = None) -> SearchResult:
    """One search of ``req`` with ``recipe`` (the recipe of the request's method). Method
    ``iterative`` runs rounds of its base method (`iterative_search`). The query is embedded
    once however many lists and rounds read its vector. ``timings``: see the module."""
    t = clock(timings)
    store, pool, sparse = stores.messages, runtime.pool, runtime.sparse
    embedder = QueryMemo.of(runtime.embedder)
    plan = resolve(req, recipe, datetime.now(UTC))
    lap(timings, "plan", t)
    if plan.units == "episodes":
        return _episodes(store, stores.episodes, embedder, req, plan, pool)
    observations: list[FactHit] = []
    if not plan.messages:
        return pack(req, [], {}, set(), _observations(stores.facts, embedder, plan, pool),
                    plan.normalise_time)
    trace = None
    if req.method == "iterative":
        def one_shot(p: Plan) -> tuple[list[Selected], dict[str, Row], set[tuple[str, str]]]:
            return select_messages(store, message_lists(store, embedder, p, pool,
                                                        sparse=sparse), p)

        selected, records, links, trace = iterative_messages(one_shot, req, recipe,
                                                             runtime.decider)
    else:
        lists = message_lists(store, embedder, plan, pool, timings, sparse)
        selected, records, links = select_messages(store, lists, plan, timings)
    if plan.observations:  # the query's vector is the memo's by now
        observations = _observations(stores.facts, embedder, plan, pool)
    t = clock(timings)
    result = pack(req, selected, records, links, observations, plan.normalise_time,
                  plan.expand if plan.budget is None else None)
    lap(timings, "pack", t)
    return result if trace is None else result.model_copy(update={"trace": trace})


def _filters(plan: Plan) -> Filters:
    return Filters(plan.session_id, plan.time_from, plan.time_to, plan.metadata, plan.as_of)


def _query(plan: Plan, k: int, embedder: Embedder | None = None,
           timings: Timings | None = None) -> Query:
    """The query of ``k`` candidates per list; with ``embedder``, its vector (when the plan
    embeds: timed as ``embed``), else none (what the text lists read while it is embedded)."""
    vector = None
    if embedder is not None and plan.embed:
        t = clock(timings)
        vector = query_vectors(embedder, [plan.query])[0]
        lap(timings, "embed", t)
    return Query(plan.owner, vector, plan.fulltext, k, plan.overfetch, _filters(plan), plan.now)


def message_retrievers(store: TenantStore, plan: Plan) -> dict[str, Retriever]:
    """The retriever of each message recall list of the plan."""
    sentences = SentenceRetriever(store)
    windows: dict[int, WindowRetriever] = {}
    out: dict[str, Retriever] = {}
    for name in plan.lists:
        size = window_size(name)
        if size is not None:
            if size not in windows:
                windows[size] = WindowRetriever(store.sibling(WindowStore), size)
            out[name] = windows[size]
        else:
            out[name] = sentences
    return out


def message_lists(
    store: TenantStore, embedder: Embedder, plan: Plan, pool: Executor | None = None,
    timings: Timings | None = None, sparse: SparseEncoder | None = None,
) -> dict[str, list[Candidate]]:
    """Every message recall list of the plan. With a pool, the fulltext lists, and the sparse
    list with its query's encoding, run while the query is being embedded; then the vector
    lists run side by side, the first on the caller's thread. With ``plan.one_round_trip``, the
    message lists ``vector`` and ``fulltext`` run together, once the query is embedded, in one
    query on the caller's thread (timed as ``hybrid``)."""
    retrievers = message_retrievers(store, plan)
    together = (plan.one_round_trip and bool(plan.fulltext) and plan.embed
                and {"vector", "fulltext"} <= set(retrievers))
    text_only = _query(plan, plan.candidates)
    pending: dict[str, Future[list[Candidate]]] = {}
    if pool is not None:
        pending = {n: pool.submit(_recall, r, n, text_only, timings)
                   for n, r in retrievers.items() if index_of(n) == "fulltext" and plan.fulltext
                   and not (together and n == "fulltext")}
    if "sparse" in retrievers and pool is not None:
        pending["sparse"] = pool.submit(_sparse_recall, retrievers["sparse"], plan.query,
                                        text_only, sparse, timings)
    query = _query(plan, plan.candidates, embedder, timings)
    done: dict[str, list[Candidate]] = {}
    vectors = [n for n in retrievers if index_of(n) == "vector"]
    if together and query.vector is not None:
        vectors.remove("vector")
        if pool is not None:
            pending.update((n, pool.submit(_recall, retrievers[n], n, query, timings))
                           for n in vectors)
        t = clock(timings)
        done = retrievers["vector"].recall_many(("vector", "fulltext"), query)
        lap(timings, "hybrid", t)
    elif pool is not None and query.vector is not None:
        pending.update((n, pool.submit(_recall, retrievers[n], n, query, timings))
                       for n in vectors[1:])
    return {n: done[n] if n in done else pending[n].result() if n in pending
            else _sparse_recall(r, plan.query, query, sparse, timings) if n == "sparse"
            else _recall(r, n, query, timings)
            for n, r in retrievers.items()}


def _sparse_recall(retriever: Retriever, text: str, query: Query,
                   sparse: SparseEncoder | None, timings: Timings | None) -> list[Candidate]:
    """The sparse list: ``text`` encoded into its word pieces, then the index query."""
    if sparse is None:
        raise ValueError("the plan has a sparse list but no sparse model was given")
    t = clock(timings)
    pieces = sparse.encode([text], QUERY_TOP)[0]
    lap(timings, "sparse_embed", t)
    return _recall(retriever, "sparse", replace(query, sparse=query_text(pieces)), timings)


def _recall(retriever: Retriever, name: str, query: Query,
            timings: Timings | None) -> list[Candidate]:
    t = clock(timings)
    found = retriever.recall(name, query)
    lap(timings, name, t)
    return found


def ranked(lists: Mapping[str, Sequence[Candidate]],
           matched_only: bool = False) -> dict[str, Ranked]:
    """Message lists for fusion: a list of covering units credits each unit's rank to the
    messages it covers (`credit`; with ``matched_only``, only to those a message list found); a
    message list is ranked as it is."""
    turns = {n: [(c.id, c.rank) for c in cs] for n, cs in lists.items()
             if window_size(n) is None}
    found = {id_ for pairs in turns.values() for id_, _ in pairs} if matched_only else None
    return {n: turns[n] if n in turns else credit([c.covers for c in cs], found)
            for n, cs in lists.items()}


def weights(lists: Sequence[str], split: bool, sparse: float = 1.0) -> dict[str, float]:
    """Fusion weights: with ``split``, a window list weighs 1/size (a window's vote is shared
    by the turns it covers, so a window matters as much as one turn); the ``sparse`` list weighs
    ``sparse``; other lists weigh 1."""
    sizes = {n: window_size(n) for n in lists} if split else {}
    out = {n: 1 / size for n, size in sizes.items() if size is not None}
    if "sparse" in lists:
        out["sparse"] = sparse
    return out


def public_rules(fused: Sequence[Fused]) -> list[Fused]:
    """Lists named as the reply's ``rules``: every window list is ``window``."""
    def rule(name: str) -> str:
        return name if window_size(name) is None else "window"

    return [Fused(f.id, f.score, tuple(dict.fromkeys(rule(r) for r in f.rules)), f.best_rank)
            for f in fused]


def select_messages(
    store: TenantStore, lists: Mapping[str, Sequence[Candidate]], plan: Plan,
    timings: Timings | None = None,
) -> tuple[list[Selected], dict[str, Row], set[tuple[str, str]]]:
    t = clock(timings)
    fused, derived = fused_candidates(store, lists, plan, timings)
    t = lap(timings, "fusion", t)
    budget = plan.budget
    if plan.expand is not None and fused:
        heads = budget if budget is not None else plan.k
        apart: dict[str, Row] = {}  # the re-ranked candidates' messages, when read on their own
        got: Windows | None = None
        if plan.ranker is not None:
            depth = plan.ranker.reach(heads)
            ids = [f.id for f in fused[:depth]]
            if depth - heads <= SHARED_READ:
                # one query: the windows of every candidate re-ranked, whose messages the
                # ranker reads (the heads it puts first are among them and keep their windows)
                got = matching_windows(store.windows(ids, *plan.expand, plan.as_of),
                                       plan.metadata)
                t = lap(timings, "expansion", t)
                read = got.records
            else:  # their messages, then only the heads' windows
                read = apart = {r["id"]: r for r in store.get_messages(ids)}
            fused = rerank(plan.ranker, plan.query, fused, {**lists, **derived}, read, depth)
            t = lap(timings, "rerank", t)
        if got is None:
            got = matching_windows(store.windows([f.id for f in fused[:heads]], *plan.expand,
                                                 plan.as_of), plan.metadata)
            t = lap(timings, "expansion", t)
        selected = select_heads(fused, got.windows, budget, plan.k, plan.decay)
        lap(timings, "select", t)
        return selected, {**apart, **got.records}, got.links
    nuclei = fused if budget is not None else fused[: plan.k]
    selected = select(nuclei, {}, budget, plan.decay)
    t = lap(timings, "select", t)
    records = {r["id"]: r for r in store.get_messages([s.id for s in selected])}
    lap(timings, "expansion", t)
    return selected, records, set()


def matching_windows(got: Windows, cond: Condition | None) -> Windows:
    """The windows with only the neighbours whose metadata passes ``cond`` (the hits
    themselves passed it in recall)."""
    if cond is None:
        return got
    kept = {i for i, r in got.records.items() if metadata.matches(r.get("metadata_pairs"), cond)}
    return Windows(windows={h: [i for i in w if i in kept or i == h]
                            for h, w in got.windows.items()},
                   links=got.links, records={i: r for i, r in got.records.items() if i in kept})


def fused_candidates(
    store: TenantStore, lists: Mapping[str, Sequence[Candidate]], plan: Plan,
    timings: Timings | None = None,
) -> tuple[list[Fused], dict[str, list[Candidate]]]:
    """The plan's recall lists fused, with the lists derived from them (`_fuse`), every window
    list named ``window`` in the rules; and the derived lists the learned re-ranking reads as
    it reads the recall lists (``graph``, with its ranks and PageRank scores)."""
    fused, walked = _fuse(store, ranked(lists, plan.window_matched_only), plan, timings)
    return public_rules(fused), walked


def _fuse(store: TenantStore, lists: dict[str, Ranked], plan: Plan,
          timings: Timings | None = None) -> tuple[list[Fused], dict[str, list[Candidate]]]:
    """Fuse the recall lists (window lists weighed by `weights`); then the lists derived from
    that fusion join and it runs again: ``time`` (a query that names a time: the candidates of
    that time, in fused order; or, with ``restrict``, only those are kept), ``session`` (the
    session prior) and ``graph`` (method ``graph``: `graph_list`, also returned as
    candidates)."""
    windows = [n for n in lists if window_size(n) is not None]
    if plan.metadata and windows:  # the lists that cannot filter by metadata in their queries
        allowed = store.matching(sorted({i for n in windows for i, _ in lists[n]}),
                                 _filters(plan))
        lists = {n: [(i, r) for i, r in ranks if i in allowed] if n in windows else ranks
                 for n, ranks in lists.items()}
    weighed = weights(list(lists), plan.window_split, plan.sparse_weight)
    fused = fuse(lists, plan.rrf_k, weighed)
    walked: dict[str, list[Candidate]] = {}
    if not fused:
        return fused, walked
    derived: dict[str, Ranked] = {}
    inside: set[str] | None = None
    span = (temporal.query_range(plan.query, plan.now) if plan.time_hint != "off" else None)
    if span is not None:
        t = clock(timings)
        inside = store.in_time_range([f.id for f in fused], *span)
        if timings is not None:  # a round trip inside fusion: counted apart from it
            spent = lap(timings, "time_range", t) - t
            timings["fusion"] = timings.get("fusion", 0.0) - spent * 1000
        if plan.time_hint == "boost":
            derived["time"] = [(f.id, n) for n, f in
                               enumerate((f for f in fused if f.id in inside), start=1)]
    if plan.session_prior:
        derived["session"] = session_prior(fused, store.sessions_of([f.id for f in fused]),
                                           plan.session_depth)
    if plan.graph is not None:
        walked["graph"] = graph_list(store, fused, plan.query, plan.owner, plan.now, plan.graph)
        if plan.metadata or plan.as_of:  # the walk reaches messages through entities,
            # whatever their metadata and time
            allowed = store.matching([c.id for c in walked["graph"]], _filters(plan))
            walked["graph"] = [c for c in walked["graph"] if c.id in allowed]
        derived["graph"] = [(c.id, c.rank) for c in walked["graph"]]
        weighed["graph"] = plan.graph.weight
    if derived:
        fused = fuse({**lists, **derived}, plan.rrf_k, weighed)
    if inside is not None and plan.time_hint == "restrict":
        fused = [f for f in fused if f.id in inside]
    return fused, walked


def graph_list(store: TenantStore, fused: Sequence[Fused], query: str, owner: str,
               now: datetime, walk: GraphWalk) -> list[Candidate]:
    """The personalised PageRank list (`graph.rank`) over the neighbourhood of the best
    fused candidates and of the entities the query names, read in one query."""
    seeds = [(f.id, f.score) for f in fused[: walk.seeds]]
    names = [m.name for m in query_mentions(query, temporal.event_dates(query, now))]
    row = store.sibling(EntityStore).neighbourhood(
        owner, [i for i, _ in seeds], names, walk.max_degree, walk.max_entities, walk.per_entity)
    return [Candidate(id_, "graph", r, score) for id_, r, score in
            graph.rank(Neighbourhood.of(row), seeds, names, walk)]


def _unit_fused(retriever: Retriever, embedder: Embedder, plan: Plan,
                pool: Executor | None) -> list[Fused]:
    """Vector and fulltext recall over another unit (observations, episodes), fused by RRF.
    With a pool, the fulltext list runs while the query is being embedded."""
    text_only = _query(plan, plan.unit_candidates)
    pending = {n: pool.submit(retriever.recall, n, text_only)
               for n in plan.unit_lists if pool is not None and index_of(n) == "fulltext"}
    query = _query(plan, plan.unit_candidates, embedder)
    return fuse({n: [(c.id, c.rank) for c in (pending[n].result() if n in pending
                                              else retriever.recall(n, query))]
                 for n in plan.unit_lists}, plan.rrf_k)


def _episodes(
    store: TenantStore, episodes: EpisodeStore, embedder: Embedder, req: SearchRequest,
    plan: Plan, pool: Executor | None,
) -> SearchResult:
    """Episodes as the unit: each hit brings all its source messages, which count against the
    budget (an episode that would overflow it is skipped; the first one is always kept)."""
    fused = _unit_fused(EpisodeRetriever(episodes), embedder, plan, pool)
    budget = plan.budget
    limit = len(fused) if budget is not None else plan.k
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
    result = pack(req, list(selected.values()), records, _chained(hits), (), plan.normalise_time)
    return result.model_copy(update={"episodes": hits})


def _chained(hits: Sequence[EpisodeHit]) -> set[tuple[str, str]]:
    """An episode's messages are consecutive: they render as one block."""
    return {pair for h in hits for pair in pairwise(h.messages)}


def _observations(facts: FactStore, embedder: Embedder, plan: Plan,
                  pool: Executor | None) -> list[FactHit]:
    fused = _unit_fused(FactRetriever(facts), embedder, plan, pool)[: plan.k]
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
    reach: tuple[int, int] | None = None,
) -> SearchResult:
    """The reply. With ``reach`` (before, after): the hits are the best ``req.k`` nuclei, each
    with the chosen turns at most ``before`` NEXT steps earlier and ``after`` later (`links`)
    in its ``window``; without: every chosen message is a hit (a message budget, or no
    expansion). Hits best first (``req.order`` ``time``: in time); the context renders hits
    and windows in time, one block per run of consecutive turns, after the facts."""
    present = [s for s in selected if s.id in records]
    by_time = sorted(present, key=lambda s: _order(records[s.id], s.id))
    chosen = sorted(present, key=lambda s: -s.score)  # stable: ties keep the selection's order
    windows: dict[str, list[str]] = {}
    if reach is not None:
        chosen = [s for s in chosen if s.nucleus][: req.k]
        later = dict(links)
        earlier = {b: a for a, b in links}
        ids = {s.id for s in present}
        for s in chosen:
            windows[s.id] = [*reversed(_along(s.id, earlier, reach[0], ids)),
                             *_along(s.id, later, reach[1], ids)]
    if req.order == "time":
        chosen.sort(key=lambda s: _order(records[s.id], s.id))
    hits = [_hit(s, records[s.id], [_turn(records[i]) for i in windows.get(s.id, ())])
            for s in chosen]
    shown = {h.id for h in hits} | {t.id for h in hits for t in h.window}
    turns = {s.id: _turn(records[s.id]) for s in by_time if s.id in shown}
    blocks = [[turns[i] for i in run] for run in clusters(list(turns), links)]
    parts = [render_facts(observations), render(blocks, normalise_time)]
    context = "\n\n".join(p for p in parts if p)
    interleaved: list[UnitRef] = []
    if req.units == "both":
        nuclei = [h.id for h in sorted(hits, key=lambda h: -h.score) if h.nucleus]
        for m, o in zip_longest(nuclei, [o.id for o in observations]):
            if m is not None:
                interleaved.append(UnitRef(unit="message", id=m))
            if o is not None:
                interleaved.append(UnitRef(unit="observation", id=o))
    return SearchResult(
        query=req.query, method=req.method, hits=hits, observations=list(observations),
        interleaved=interleaved, context=context, context_tokens=estimate_tokens(context),
    )


def _along(start: str, step: Mapping[str, str], steps: int, kept: set[str]) -> list[str]:
    """The ids of ``kept`` within ``steps`` steps of ``start`` along ``step`` (NEXT one way),
    nearest first; a message not kept (a metadata filter left it out) is stepped over."""
    out: list[str] = []
    current: str | None = start
    for _ in range(steps):
        current = step.get(current) if current is not None else None
        if current is None:
            break
        if current in kept:
            out.append(current)
    return out


def _hit(s: Selected, record: Mapping[str, Any], window: list[Turn]) -> Hit:
    return Hit(id=s.id, text=record["text"], speaker=record["speaker"],
               timestamp=record["timestamp"], session_id=record["session_id"],
               owner=record["owner"], score=s.score, rules=list(s.rules),  # type: ignore[arg-type]
               nucleus=s.nucleus, metadata=json.loads(record.get("metadata_json") or "{}"),
               window=window)


def _turn(record: Mapping[str, Any]) -> Turn:
    return Turn(id=record["id"], text=record["text"], speaker=record["speaker"],
                timestamp=record["timestamp"], session_id=record["session_id"],
                metadata=json.loads(record.get("metadata_json") or "{}"))


def returned_ids(result: SearchResult) -> list[str]:
    """Every message a result returns: its hits, then their windows' turns, each once."""
    return list(dict.fromkeys([*(h.id for h in result.hits),
                               *(t.id for h in result.hits for t in h.window)]))


def _order(record: Mapping[str, Any], id_: str) -> tuple[Any, ...]:
    """Event time, then the order of arrival: the same order as the NEXT chain."""
    return (record["timestamp"], record["session_id"], record.get("recorded_at") or 0,
            record.get("batch_index") or 0, id_)


__all__ = ["Fused", "Runtime", "Stores", "message_lists", "pack", "returned_ids", "search"]
