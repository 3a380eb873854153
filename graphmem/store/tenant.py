"""Queries bound to one tenant. Every method passes ``tenant`` to its Cypher; none takes it."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import Conflict, in_use
from graphmem.messages import metadata
from graphmem.messages.metadata import Condition
from graphmem.store.connection import SearchFailed
from graphmem.store.jobs import enqueue_tx, form_session_jobs
from graphmem.store.scope import scope_token, scopes
from graphmem.store.times import epoch_times, from_epoch_us

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row

MAX_FETCH = 10_000
FILTERED_OVERFETCH = 4
"""Sentence hits read per message wanted when the vector index filters by owner (Neo4j 2026):
on LoCoMo dev 4 and 3 gave the recall of 8 at every budget, 2 lost some."""
VECTOR_WIDENINGS = 2
"""Reads of the vector index a short list filtered by metadata makes before its exact recall."""
WIDEN = 4
"""A fulltext list filtered by metadata that comes back short reads the index once more, with
WIDEN times the fetch."""
MAX_METADATA_MESSAGES = 100_000
"""The messages a metadata filter's exact recall reads from the metadata index at most."""
MAX_TOKEN_CLAUSES = 1000
"""A filter with more values than this (Lucene's limit is 1024 clauses) is recalled exactly by
the scan of the owner's sentences instead."""
NEAR_REACH = 3
"""The NEXT steps `queries/recall/windows_near` reads each way (the default expansion needs 2
and 3)."""
WINDOW_MESSAGE = ("id", "owner", "session_id", "speaker", "role", "text", "batch_index",
                  "timestamp", "recorded_at", "metadata_json", "metadata_pairs")
"""A message's values in `queries/recall/windows`' ``messages`` lists, in order (the two times as
microseconds since the epoch; its metadata as sent, and as matched:
`graphmem.messages.metadata`)."""
B = TypeVar("B", bound="TenantBound")


@dataclass(frozen=True)
class Filters:
    """Restrictions every recall list applies (event time: from inclusive, to exclusive;
    ``as_of`` inclusive)."""

    session_id: str | None = None
    time_from: datetime | None = None
    time_to: datetime | None = None
    metadata: Condition | None = None
    """A metadata filter as `graphmem.messages.metadata.condition` encodes it."""
    as_of: datetime | None = None
    """Only what happened at or before this instant (a unit's event time: a message's
    timestamp, a window's or an episode's last turn)."""

    def until(self) -> datetime | None:
        """The exclusive end of event time the message lists read: ``time_to``, or the instant
        just after ``as_of`` when that is earlier (stored times have microsecond precision, so
        ``< as_of + 1 us`` is ``<= as_of``)."""
        if self.as_of is None:
            return self.time_to
        cap = self.as_of + timedelta(microseconds=1)
        return cap if self.time_to is None else min(self.time_to, cap)

    def params(self) -> dict[str, Any]:
        metadata = [c.param() for c in self.metadata] if self.metadata else None
        return {"session_id": self.session_id, "time_from": self.time_from,
                "time_to": self.until(), "metadata": metadata}


@dataclass
class Windows:
    windows: dict[str, list[str]] = field(default_factory=dict)
    """Hit id -> chronological ids of its window (the hit included)."""
    links: set[tuple[str, str]] = field(default_factory=set)
    """Pairs (a, b) with a NEXT b."""
    records: dict[str, Row] = field(default_factory=dict)
    """Every message read, by id."""


class TenantBound:
    """A store bound to one tenant: every named query it runs gets ``$tenant`` from here, never
    from the caller, and, given an ``owner``, that owner's fulltext ``$scope`` (`scope_token`)
    (the base of `TenantStore`, `FactStore` and `EpisodeStore`)."""

    def __init__(self, store: Connection, tenant: str) -> None:
        self._store = store
        self.tenant = tenant

    def _run(self, name: str, *, write: bool = False, plain: bool = False,
             fallback: bool = True, **params: Any) -> list[Row]:
        """``name`` run for this tenant (``plain``, ``fallback``: see `Store.run`)."""
        owner = params.get("owner")
        if isinstance(owner, str):
            params["scope"] = scope_token(self.tenant, owner)
        return self._store.run(name, write=write, plain=plain, fallback=fallback,
                               tenant=self.tenant, **params)

    def _run_plain(self, name: str, **params: Any) -> list[Row]:
        """A read of plain values only (the search path's: ids, scores, text, times as
        integers), taken as the driver gives them."""
        return self._run(name, plain=True, **params)

    def sibling(self, kind: type[B]) -> B:
        """Another tenant-bound store of the same tenant (e.g. a `WindowStore`)."""
        return kind(self._store, self.tenant)

    def _vector_overfetch(self, overfetch: int, filtered_after: bool) -> int:
        """The over-fetch of a vector list of one hit per node: none (1) where the index itself
        filters tenant and owner (Neo4j 2026) and nothing filters its hits after it; reading
        more costs time and, on 2026.08.1, fails for an owner with fewer nodes than the fetch
        (`Store.run`)."""
        return 1 if self._store.vector_filters and not filtered_after else overfetch


class TenantStore(TenantBound):

    # --- messages ---------------------------------------------------------------------------
    def existing_ids(self, ids: list[str]) -> set[str]:
        return {r["id"] for r in self._run("queries/messages/existing_ids", ids=ids)}

    def write_messages(
        self, messages: list[Row], sentences: list[Row], sessions: list[Row], batch: str,
        now: datetime, mentions: list[Row] | None = None, by: str | None = None,
    ) -> list[Row]:
        """Store a batch in ONE transaction: messages (idempotent; new ones with ``by``, who
        sent them, as ``recorded_by``), sentence units and entity
        ``mentions`` (`graphmem.store.entities`) of the new ones, NEXT relinking of the touched
        sessions, and (setting ``formation_jobs``) a
        ``form_session`` job per touched session, committed with the messages. Raises Conflict,
        writing nothing, if an id is already stored with other content. Returns [{id, created}]
        in input order."""
        tenant = self.tenant
        settings = self._store.settings
        # converted once, before the transaction (not again on a retry)
        sentences_query, sentences = self._store.vector_rows(
            "queries/messages/write_sentences", sentences)
        messages = [{**m, "metadata_tokens": metadata.tokens(tenant, m["owner"],
                                                             m.get("metadata_pairs") or [])}
                    for m in messages]

        def work(tx: ManagedTransaction) -> list[Row]:
            rows = tx.run(
                cypher.load("queries/messages/write_messages"), tenant=tenant, batch=batch, now=now,
                by=by, rows=messages, scopes=scopes(tenant, (m["owner"] for m in messages)),
            ).data()
            clashes = [r["id"] for r in rows if r["conflict"]]
            if clashes:
                first = min(m["index"] for m in messages if m["id"] in clashes)
                raise Conflict(in_use(f"messages[{first}]", clashes),
                               field=f"messages[{first}].id")
            created = {r["id"] for r in rows if r["created"]}
            fresh = [s for s in sentences if s["message_id"] in created]
            if fresh:
                tx.run(cypher.load(sentences_query), tenant=tenant, rows=fresh).consume()
            named = [r for r in mentions or () if r["message_id"] in created]
            if named:
                tx.run(cypher.load("queries/entities/write_mentions"), tenant=tenant,
                       rows=named).consume()
            if created:
                touched = [s for s in sessions if s["ids"] & created]
                tx.run(
                    cypher.load("queries/messages/link_sessions"), tenant=tenant, batch=batch,
                    now=now,
                    sessions=[{k: v for k, v in s.items() if k != "ids"} for s in touched],
                ).consume()
                if settings.formation_jobs:
                    enqueue_tx(tx, tenant, form_session_jobs(touched), settings.job_max_attempts)
            return [{"id": r["id"], "created": r["created"]} for r in rows]

        result: list[Row] = self._store.write_tx(work)
        return result

    def get_messages(self, ids: list[str]) -> list[Row]:
        found = self._run_plain("queries/messages/get_messages", ids=ids)[0]["messages"]
        return [epoch_times(m) for m in found]

    def session_messages(
        self, session_id: str, owner: str | None, skip: int, limit: int
    ) -> list[Row]:
        rows = self._run(
            "queries/messages/session_messages", session_id=session_id, owner=owner, skip=skip,
            limit=limit
        )
        return [epoch_times(r["m"]) for r in rows]

    def owner_sessions(self, owner: str, skip: int, limit: int) -> list[Row]:
        rows = self._run("queries/messages/owner_sessions", owner=owner, skip=skip, limit=limit)
        return [epoch_times(r["s"]) for r in rows]

    def owners(self, after: str, limit: int, named: frozenset[str] | None = None) -> list[Row]:
        """The tenant's owners after ``after``; ``named``: of those owners only."""
        if named is None:
            rows = self._run("queries/owners/owners", after=after, limit=limit)
        else:
            rows = self._run("queries/owners/owners_named", owners=sorted(named), after=after,
                             limit=limit)
        return [epoch_times(r["o"]) for r in rows]

    def owner_of(self, kind: str, id_: str) -> str | None:
        """The owner of the message, fact or trace ``id_`` (``kind``); None when there is
        none."""
        rows = self._run("queries/owners/owner_of", kind=kind, id=id_)
        return str(rows[0]["owner"]) if rows else None

    def owner_counts(self, owner: str) -> Row:
        return self._run("queries/owners/owner_counts", owner=owner)[0]

    def delete_owner(self, owner: str, step: int = 5000) -> Row:
        """Forget everything of an owner, in bounded transactions; returns what was removed."""
        total = {"messages": 0, "sentences": 0, "sessions": 0, "facts": 0, "episodes": 0,
                 "jobs": 0, "windows": 0, "procedural": 0, "entities": 0, "documents": 0,
                 "bookkeeping": 0}
        while True:
            row = self._run("queries/owners/delete_owner_step", write=True, owner=owner,
                            limit=step)[0]
            for key in total:
                total[key] += row[key]
            if not any(row.values()):
                del total["bookkeeping"]
                return total

    # --- recall -----------------------------------------------------------------------------
    def vector_search(
        self, owner: str, vector: list[float], k: int, overfetch: int, filters: Filters
    ) -> list[tuple[str, float]]:
        """Approximate search, over-fetched then filtered; exact search when that runs dry.
        Where the index filters by tenant and owner itself (Neo4j 2026), the over-fetch only
        covers a message's several sentences and the optional session and time filters."""
        params = {"owner": owner, "vector": vector, **filters.params()}
        hits, exhausted = ranked_search(self._run_plain, "queries/recall/vector_search", k,
                                        self._sentence_overfetch(overfetch), params, widen=False)
        if len(hits) < k and not exhausted:
            hits = self._short_vector(
                k, first_fetch(k, self._sentence_overfetch(overfetch)), len(hits), params)
        return hits

    def _short_vector(self, k: int, fetched: int, found: int,
                      params: dict[str, Any]) -> list[tuple[str, float]]:
        """A filtered vector list that found ``found`` < k messages in a fetch of ``fetched``:
        with a metadata filter that let some through, the index read again with the fetch that
        share projects to hold k and a half (at most `MAX_FETCH`, `VECTOR_WIDENINGS` times); a
        filter that let none through, or one still short, the exact recall (for metadata, of
        the matching messages only: `_exact_vector`)."""
        fetch = fetched
        for _ in range(VECTOR_WIDENINGS if params.get("metadata") else 0):
            if not found or fetch >= MAX_FETCH:
                break
            fetch = min(MAX_FETCH, max(fetch * 2, math.ceil(fetch * 1.5 * k / found)))
            row = self._run_plain("queries/recall/vector_search", fetch=fetch, k=k, **params)[0]
            hits = _best_per_id(row["hits"], k)
            if len(hits) >= k or row["fetched"] < fetch or row.get("exact"):
                return _pairs(hits)
            found = len(hits)
        return self._exact_vector(k, params)

    def _sentence_overfetch(self, overfetch: int) -> int:
        """Sentence hits read per message wanted (`FILTERED_OVERFETCH` where the index filters
        by owner)."""
        return min(overfetch, FILTERED_OVERFETCH) if self._store.vector_filters else overfetch

    def _exact_vector(self, k: int, params: dict[str, Any]) -> list[tuple[str, float]]:
        """The exact scan of the owner's sentences: the k best messages. With a metadata
        filter that names values (a value, a list, ``eq``, ``in``), only the sentences of the
        messages the metadata index names for them (at most `MAX_METADATA_MESSAGES`), rather
        than every sentence of the owner; a filter of ranges, ``ne`` or ``exists`` alone
        scans the owner's sentences, checking it on each."""
        cond = params.get("metadata")
        if cond and sum(len(c["any"] or ()) for c in cond) <= MAX_TOKEN_CLAUSES and (
                query := metadata.token_query(self.tenant, params["owner"], cond)):
            return _pairs(self._run_plain("queries/recall/vector_search_metadata", k=k,
                                          tokens=query,
                                          limit=MAX_METADATA_MESSAGES, **params))
        return _pairs(self._run_plain("queries/recall/vector_search_exact", k=k, **params))

    def fulltext_search(
        self, owner: str, query: str, k: int, overfetch: int, filters: Filters
    ) -> list[tuple[str, float]]:
        """Fulltext search (``query`` already escaped) of the owner's messages (Lucene reads only
        the owner's scope), widening the fetch while a session or time filter leaves fewer than
        k; with a metadata filter, once only (`WIDEN`): the matching messages cannot be read
        from the text index, and a selective filter would otherwise widen to `MAX_FETCH` (four
        more reads) for a list the vector list's exact recall already fills. The fetch stays
        over-fetched without a filter too: Lucene orders hits of equal score differently for
        another limit, and that order is part of the recall measured."""
        params = {"owner": owner, "query": query, "k": k, **filters.params()}
        cap = first_fetch(k, overfetch) * WIDEN if filters.metadata else MAX_FETCH
        return ranked_search(self._run_plain, "queries/recall/fulltext_search", k, overfetch,
                             params, max_fetch=cap)[0]

    def hybrid_search(
        self, owner: str, vector: list[float], query: str, k: int, overfetch: int,
        filters: Filters,
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """`vector_search` and `fulltext_search` of the same owner, k and filters in one round
        trip (`queries/recall/hybrid_search`): the same hits as the two. Where either needs more
        than
        its first read (too few vector hits: the exact scan; a filter that leaves fewer than k
        text hits: a wider fetch), or a SEARCH query fails, that list alone is read again on
        its own (after a failed SEARCH the vector list is the exact scan, as `vector_search`'s
        own failure gives it)."""
        by_vector = {"owner": owner, "vector": vector, **filters.params()}
        vector_fetch = first_fetch(k, self._sentence_overfetch(overfetch))
        text_fetch = first_fetch(k, overfetch)
        try:
            row = self._run("queries/recall/hybrid_search", plain=True, fallback=False,
                            vector_fetch=vector_fetch, text_fetch=text_fetch, query=query, k=k,
                            **by_vector)[0]
        except SearchFailed:
            return (self._exact_vector(k, by_vector),
                    self.fulltext_search(owner, query, k, overfetch, filters))
        vector_hits = _pairs(_best_per_id(row["vector_hits"], k))
        if len(vector_hits) < k and row["vector_fetched"] >= vector_fetch:
            vector_hits = self._short_vector(k, vector_fetch, len(vector_hits), by_vector)
        text_hits = _pairs(_best_per_id(row["text_hits"], k))
        short = len(text_hits) < k and row["text_fetched"] >= text_fetch
        if short and filters.metadata:  # one read 4x as large, as `fulltext_search` widens
            params = {"owner": owner, "query": query, "k": k, **filters.params()}
            text_hits = ranked_search(self._run_plain, "queries/recall/fulltext_search", k,
                                      overfetch * WIDEN, params, widen=False)[0]
        elif short and text_fetch < MAX_FETCH:
            text_hits = self.fulltext_search(owner, query, k, overfetch, filters)
        return vector_hits, text_hits

    def sessions_of(self, ids: list[str]) -> dict[str, str]:
        """Message id -> its session id."""
        found = self._run_plain("queries/messages/message_sessions", ids=ids)[0]["sessions"]
        return {r["id"]: r["session_id"] for r in found}

    def matching(self, ids: list[str], filters: Filters) -> set[str]:
        """Those of ``ids`` whose metadata passes the filters' metadata condition, and that
        happened by the filters' ``as_of``."""
        if not (filters.metadata or filters.as_of) or not ids:
            return set(ids)
        params = filters.params()
        rows = self._run_plain("queries/recall/metadata_matching", ids=ids,
                               metadata=params["metadata"],
                               time_to=params["time_to"] if filters.as_of else None)
        return set(rows[0]["ids"])

    def in_time_range(self, ids: list[str], start: datetime, end: datetime) -> set[str]:
        rows = self._run_plain("queries/messages/in_time_range", ids=ids, start=start, end=end)
        return set(rows[0]["ids"])

    def windows(self, ids: list[str], before: int, after: int,
                as_of: datetime | None = None) -> Windows:
        """Each hit's window along NEXT, the NEXT pairs seen (one step past each end too, so
        that windows that merely touch are known to be consecutive), and the messages read;
        with ``as_of``, no neighbour that happened after it."""
        reach = (before + 1, after + 1)
        name = ("queries/recall/windows_near" if max(reach) <= NEAR_REACH
                else "queries/recall/windows")
        row = self._run_plain(name, ids=ids, before=reach[0], after=reach[1], as_of=as_of)[0]
        out = Windows(records={m[0]: window_message(m) for m in row["messages"]})
        for w in row["windows"]:
            out.links.update(itertools.pairwise((*w["earlier"], w["id"], *w["later"])))
            kept_before = w["earlier"][-before:] if before else []
            out.windows[w["id"]] = [*kept_before, w["id"], *w["later"][:after]]
        return out


def window_message(values: list[Any]) -> Row:
    """A message of `queries/recall/windows`' ``messages`` (a list in `WINDOW_MESSAGE` order) as a
    row,
    its times aware UTC datetimes."""
    (id_, owner, session_id, speaker, role, text, batch_index, timestamp, recorded_at,
     metadata_json, metadata_pairs) = values
    return {"id": id_, "owner": owner, "session_id": session_id, "speaker": speaker,
            "role": role, "text": text, "batch_index": batch_index,
            "timestamp": from_epoch_us(timestamp), "recorded_at": from_epoch_us(recorded_at),
            "metadata_json": metadata_json, "metadata_pairs": metadata_pairs or []}


def ranked_search(
    run: Callable[..., list[Row]], name: str, k: int, overfetch: int, params: dict[str, Any],
    widen: bool = True, max_fetch: int = MAX_FETCH,
) -> tuple[list[tuple[str, float]], bool]:
    """Run an index query that reads ``$fetch`` hits and filters them (its columns: fetched,
    hits; ``exact`` when a failed SEARCH was answered by an exact scan). Returns the best k
    distinct ids, and whether the index had nothing more to give. With
    ``widen``, the fetch grows while the filter leaves fewer than k, up to ``max_fetch``."""
    rows, exhausted = ranked_rows(run, name, k, overfetch, params, widen, max_fetch)
    return _pairs(rows), exhausted


def ranked_rows(
    run: Callable[..., list[Row]], name: str, k: int, overfetch: int, params: dict[str, Any],
    widen: bool = True, max_fetch: int = MAX_FETCH,
) -> tuple[list[Row], bool]:
    """`ranked_search` keeping each hit's whole row (``id``, ``score`` and any other field)."""
    fetch = first_fetch(k, overfetch)
    max_fetch = min(max_fetch, MAX_FETCH)
    while True:  # k rides along for a failed SEARCH's exact scan (`Store.run`)
        row = run(name, fetch=fetch, **{"k": k, **params})[0]
        hits = _best_per_id(row["hits"], k)
        exhausted = row["fetched"] < fetch or bool(row.get("exact"))
        if len(hits) >= k or exhausted or fetch >= max_fetch or not widen:
            return hits, exhausted
        fetch = min(fetch * 4, max_fetch)


def first_fetch(k: int, overfetch: int) -> int:
    """The index hits a list reads first for k wanted."""
    return min(max(k * overfetch, k), MAX_FETCH)


def _pairs(rows: list[Row]) -> list[tuple[str, float]]:
    """Best-first rows as ``(id, score)`` hits."""
    return [(r["id"], r["score"]) for r in rows]


def _best_per_id(hits: list[Row], k: int) -> list[Row]:
    """First (best) occurrence of each id in a best-first list, at most k."""
    out: dict[str, Row] = {}
    for h in hits:
        if h["id"] not in out:
            out[h["id"]] = h
            if len(out) >= k:
                break
    return list(out.values())
