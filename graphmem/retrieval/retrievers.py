"""One retriever per recall unit, behind one small interface: given the query (its vector, its
escaped fulltext form, the filters), a retriever returns one named ranked list of candidates,
each with its provenance (the list, its rank and score there) and, for a unit that covers
messages, the messages it covers. Retrievers only read; fusion, expansion and packing are pure
functions elsewhere."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from graphmem.store.episodes import EpisodeStore
from graphmem.store.facts import FactStore
from graphmem.store.sparse import SparseStore
from graphmem.store.tenant import Filters, TenantStore
from graphmem.store.windows import WindowStore

Index = Literal["vector", "fulltext", "sparse"]


@dataclass(frozen=True)
class Query:
    """What every retriever is given: computed once per search."""

    owner: str
    vector: list[float] | None
    """The query's embedding; None when no vector list runs."""
    fulltext: str
    """The escaped Lucene query; "" when no fulltext list runs."""
    k: int
    """Hits wanted per list."""
    overfetch: int
    filters: Filters
    as_of: datetime
    sparse: str = ""
    """The query's weighted word pieces as a Lucene query (`embedders.sparse.query_text`); ""
    when the sparse list does not run."""


@dataclass(frozen=True)
class Candidate:
    id: str
    list: str
    """The recall list that found it."""
    rank: int
    """Its rank in that list, from 1."""
    score: float
    """The index's score (cosine in [0, 1], or Lucene's)."""
    covers: tuple[str, ...] = ()
    """The message ids the unit covers, in order (turn windows)."""


def index_of(list_name: str) -> Index:
    """``vector``, ``fulltext`` or ``sparse``: the kind of index a list name ends with."""
    if list_name.endswith("vector"):
        return "vector"
    return "sparse" if list_name.endswith("sparse") else "fulltext"


def rows_of(hits: Sequence[tuple[str, float]]) -> list[dict[str, Any]]:
    """A store's best-first ``(id, score)`` hits as rows ``{id, score}``."""
    return [{"id": i, "score": s} for i, s in hits]


def candidates(list_name: str, rows: Sequence[Mapping[str, Any]]) -> list[Candidate]:
    """Best-first rows ``{id, score[, messages]}`` of one list as its ranked candidates."""
    return [Candidate(r["id"], list_name, n, r["score"], tuple(r.get("messages") or ()))
            for n, r in enumerate(rows, start=1)]


class Retriever(ABC):
    """A recall unit. Subclasses name their lists and run one index search per list."""

    lists: tuple[str, ...]

    def recall(self, list_name: str, query: Query) -> list[Candidate]:
        """The ranked candidates of one of this retriever's lists (empty when the query has no
        vector, or no fulltext form, for it)."""
        if list_name not in self.lists:
            raise ValueError(f"{type(self).__name__} has no list {list_name!r}")
        index = index_of(list_name)
        param: dict[str, Any]
        if index == "vector":
            if query.vector is None:
                return []
            param = {"vector": query.vector}
        else:
            text = query.fulltext if index == "fulltext" else query.sparse
            if not text:
                return []
            param = {"query": text}
        return candidates(list_name, self._search(index, query, param))

    def recall_many(self, list_names: Sequence[str], query: Query) -> dict[str, list[Candidate]]:
        """Several of this retriever's lists (by default one index search each, in turn)."""
        return {n: self.recall(n, query) for n in list_names}

    @abstractmethod
    def _search(self, index: Index, query: Query, param: dict[str, Any]) -> list[dict[str, Any]]:
        """Best-first rows ``{id, score[, messages]}`` of one index, at most ``query.k``."""


class SentenceRetriever(Retriever):
    """Messages: ``vector`` over sentence units (a message ranks by its best sentence),
    ``fulltext`` over the messages' ``speaker: text``, ``sparse`` over their learned-sparse word
    pieces."""

    lists = ("vector", "fulltext", "sparse")

    def __init__(self, store: TenantStore) -> None:
        self._store = store

    def recall_many(self, list_names: Sequence[str], query: Query) -> dict[str, list[Candidate]]:
        """With both ``vector`` and ``fulltext`` among ``list_names`` (and the query's vector
        and text), those two in one round trip (`TenantStore.hybrid_search`: the same hits);
        any other list on its own."""
        if not ({"vector", "fulltext"} <= set(list_names) and query.vector is not None
                and query.fulltext):
            return super().recall_many(list_names, query)
        by_vector, by_text = self._store.hybrid_search(
            query.owner, query.vector, query.fulltext, query.k, query.overfetch, query.filters)
        found = {"vector": candidates("vector", rows_of(by_vector)),
                 "fulltext": candidates("fulltext", rows_of(by_text))}
        return {n: found[n] if n in found else self.recall(n, query) for n in list_names}

    def _search(self, index: Index, query: Query, param: dict[str, Any]) -> list[dict[str, Any]]:
        search: Callable[..., list[tuple[str, float]]] = (
            self._store.vector_search if index == "vector" else self._store.fulltext_search
            if index == "fulltext" else self._store.sibling(SparseStore).search)
        hits = search(query.owner, next(iter(param.values())), query.k, query.overfetch,
                      query.filters)
        return rows_of(hits)


class WindowRetriever(Retriever):
    """Turn windows of one size (``window<size>_vector``, ``window<size>_fulltext``); each
    candidate covers its turns."""

    def __init__(self, store: WindowStore, size: int) -> None:
        self._store = store
        self.size = size
        self.lists = (f"window{size}_vector", f"window{size}_fulltext")

    def _search(self, index: Index, query: Query, param: dict[str, Any]) -> list[dict[str, Any]]:
        return self._store.search(index, query.owner, self.size, query.k, query.overfetch,
                                  query.filters, **param)


class EpisodeRetriever(Retriever):
    lists = ("vector", "fulltext")

    def __init__(self, store: EpisodeStore) -> None:
        self._store = store

    def _search(self, index: Index, query: Query, param: dict[str, Any]) -> list[dict[str, Any]]:
        hits = self._store.search(index, query.owner, query.k, query.overfetch,
                                  query.filters.as_of, **param)
        return rows_of(hits)


class FactRetriever(Retriever):
    """Observations and profile facts valid at ``query.as_of``."""

    lists = ("vector", "fulltext")

    def __init__(self, store: FactStore) -> None:
        self._store = store

    def _search(self, index: Index, query: Query, param: dict[str, Any]) -> list[dict[str, Any]]:
        hits = self._store.search(index, query.owner, query.k, query.overfetch, query.as_of,
                                  **param)
        return rows_of(hits)
