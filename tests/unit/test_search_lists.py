"""The recall lists of one search: which run where (no database: a fake store)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, cast

from graphmem.models import Method, SearchRequest
from graphmem.retrieval import recipe
from graphmem.retrieval.plan import resolve
from graphmem.retrieval.search import message_lists
from graphmem.store import Filters, TenantStore
from tests.support.fakes import FakeEmbedder

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)



class Recorder:
    """Where each index query ran; the vector queries wait for each other at a barrier, so the
    search only completes when they run at the same time."""

    def __init__(self, vector_lists: int) -> None:
        self.threads: dict[str, str] = {}
        self.barrier = threading.Barrier(vector_lists, timeout=5)

    def ran(self, name: str, vector: bool) -> None:
        self.threads[name] = threading.current_thread().name
        if vector:
            self.barrier.wait()


class FakeWindows:
    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    def search(self, index: str, owner: str, size: int, k: int, overfetch: int,
               filters: Filters, **params: Any) -> list[dict[str, Any]]:
        self.rec.ran(f"window{size}_{index}", index == "vector")
        return [{"id": f"w{size}", "score": 1.0, "messages": ["m1", "m2"]}]


class FakeStore:
    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    def sibling(self, cls: type) -> FakeWindows:
        return FakeWindows(self.rec)

    def vector_search(self, owner: str, vector: list[float], k: int, overfetch: int,
                      filters: Filters) -> list[tuple[str, float]]:
        self.rec.ran("vector", True)
        return [("m1", 0.9)]

    def fulltext_search(self, owner: str, query: str, k: int, overfetch: int,
                        filters: Filters) -> list[tuple[str, float]]:
        self.rec.ran("fulltext", False)
        return [("m2", 2.0)]

    def hybrid_search(self, owner: str, vector: list[float], query: str, k: int,
                      overfetch: int, filters: Filters,
                      ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        self.rec.ran("fulltext", False)
        return self.vector_search(owner, vector, k, overfetch, filters), [("m2", 2.0)]


def test_the_vector_lists_run_side_by_side_the_first_on_the_callers_thread() -> None:
    """By default the message lists ``vector`` and ``fulltext`` are one query on the caller's
    thread (`TenantStore.hybrid_search`), beside the window lists in the pool."""
    rec = Recorder(vector_lists=3)
    req = SearchRequest(query="hiking in May", owner="o", method="rrf_windows", k=5)
    plan = resolve(req, recipe("rrf_windows"), T0)
    with ThreadPoolExecutor(4, thread_name_prefix="pool") as pool:
        lists = message_lists(cast(TenantStore, FakeStore(rec)), FakeEmbedder(), plan, pool)
    assert list(lists) == list(plan.lists)  # in the plan's (fusion) order
    assert [c.id for c in lists["window3_vector"]] == ["w3"]
    assert [(c.id, c.list, c.rank) for c in lists["fulltext"]] == [("m2", "fulltext", 1)]
    caller = threading.current_thread().name
    assert rec.threads["vector"] == rec.threads["fulltext"] == caller
    assert rec.threads["window3_vector"].startswith("pool")
    assert rec.threads["window5_vector"].startswith("pool")
    assert all(rec.threads[n].startswith("pool") for n in plan.lists
               if n.endswith("fulltext") and n != "fulltext")


def test_in_two_round_trips_the_fulltext_lists_run_while_the_query_is_embedded() -> None:
    rec = Recorder(vector_lists=3)
    req = SearchRequest(query="hiking in May", owner="o", method="rrf_windows", k=5)
    plan = resolve(req, recipe("rrf_windows").with_(one_round_trip=False), T0)
    with ThreadPoolExecutor(4, thread_name_prefix="pool") as pool:
        lists = message_lists(cast(TenantStore, FakeStore(rec)), FakeEmbedder(), plan, pool)
    assert list(lists) == list(plan.lists)
    caller = threading.current_thread().name
    assert rec.threads["vector"] == caller
    assert rec.threads["window3_vector"].startswith("pool")
    assert all(rec.threads[n].startswith("pool") for n in plan.lists if n.endswith("fulltext"))


def test_one_round_trip_needs_both_lists() -> None:
    """A query with no word for Lucene (or a single-index method) runs its one list alone."""
    rec = Recorder(vector_lists=1)
    cases: tuple[tuple[str, Method], ...] = (("?!", "rrf_expand"), ("hiking", "vector"))
    for query, method in cases:
        plan = resolve(SearchRequest(query=query, owner="o", method=method, k=5),
                       recipe(method), T0)
        lists = message_lists(cast(TenantStore, FakeStore(rec)), FakeEmbedder(), plan)
        assert [c.id for c in lists["vector"]] == ["m1"]
        assert "fulltext" not in rec.threads


def test_without_a_pool_every_list_runs_on_the_callers_thread() -> None:
    rec = Recorder(vector_lists=1)
    req = SearchRequest(query="hiking in May", owner="o", method="rrf_windows", k=5)
    plan = resolve(req, recipe("rrf_windows").with_(window_sizes=(3,)), T0)
    lists = message_lists(cast(TenantStore, FakeStore(rec)), FakeEmbedder(), plan)
    assert set(lists) == set(plan.lists)
    assert set(rec.threads.values()) == {threading.current_thread().name}
