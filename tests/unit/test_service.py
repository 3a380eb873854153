"""`TenantOps.context`: its unit searches run side by side, in order, and a failure of one is the
request's failure (no Neo4j: the searches are stand-ins)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from graphmem.config import Settings
from graphmem.errors import StoreUnavailable
from graphmem.models import ContextRequest, SearchRequest, SearchResult
from graphmem.retrieval.deciders import OfflineDecider
from graphmem.service import Memory
from graphmem.store import Store
from graphmem.tenant_ops import TenantOps


def _ops(search: Any) -> TenantOps:
    """Tenant acme's operations over stand-in parts, its searches ``search``."""
    mem = Memory.__new__(Memory)
    mem.settings, mem.sparse, mem.embedder = Settings(), None, None  # type: ignore[assignment]
    mem.store = Store.__new__(Store)  # never connected: the searches are stand-ins
    mem.units = ThreadPoolExecutor(4)
    ops = TenantOps(mem, "acme")
    ops.search_units = lambda req, recipe=None, *, embedder=None, timings=None: search(  # type: ignore[method-assign]
        ops.tenant, req, recipe, embedder=embedder)
    return ops


def _result(req: SearchRequest) -> SearchResult:
    return SearchResult(query=req.query, method=req.method, hits=[], context="",
                        context_tokens=0)


def test_context_runs_its_unit_searches_side_by_side() -> None:
    threads: dict[str, str] = {}

    def search(tenant: str, req: SearchRequest, rs: Any, *, embedder: Any) -> SearchResult:
        threads[req.units] = threading.current_thread().name
        time.sleep(0.2)
        return _result(req)

    ops = _ops(search)
    started = time.perf_counter()
    out = ops.context(ContextRequest(query="q", owner="o", trace=True))
    assert time.perf_counter() - started < 0.45  # three searches of 0.2 s, not 0.6 s
    assert threads["messages"] == threading.current_thread().name  # the first on this thread
    assert len(set(threads.values())) == 3
    assert out.trace is not None
    assert [s["unit"] for s in out.trace.searches] == ["message", "fact", "episode"]


@pytest.mark.parametrize("failing", ["messages", "observations"])
def test_a_failed_unit_search_fails_the_context(failing: str) -> None:
    def search(tenant: str, req: SearchRequest, rs: Any, *, embedder: Any) -> SearchResult:
        if req.units == failing:
            raise StoreUnavailable("Neo4j is unreachable")
        return _result(req)

    with pytest.raises(StoreUnavailable):
        _ops(search).context(ContextRequest(query="q", owner="o"))


@pytest.mark.parametrize(("embedder", "unit", "on"), [
    ("minilm", "sentence", True), ("minilm", "passage", False), ("e5-small-v2", "passage", True),
    ("e5-small-v2", "sentence", False), ("bge-small-en-v1.5", "sentence", False)])
def test_the_re_ranking_runs_only_under_an_embedding_it_was_trained_on(
        embedder: str, unit: str, on: bool) -> None:
    mem = Memory.__new__(Memory)
    mem.settings = Settings.model_validate({"embedder": embedder, "embedding_unit": unit})
    mem.sparse = None
    assert mem.recipe().reranking.rerank is on
    assert mem.recipe().reranking.embedding == f"{embedder}/{unit}"
    assert mem.recipe(preset="fast").reranking.rerank is False


@pytest.mark.parametrize(("preset", "every"), [(None, True), ("deep", True), ("fast", False),
                                             ("lists", False)])
def test_the_offline_decider_follows_up_every_question_unless_told_not_to(
        preset: str | None, every: bool) -> None:
    mem = Memory.__new__(Memory)
    mem.settings = Settings.model_validate({"iterative_decider": "offline"})
    mem.sparse = None
    rs = (mem.recipe("iterative").with_(iterative_every_question=False) if preset == "lists"
          else mem.recipe("iterative", preset))
    decider = mem.decider(rs)
    assert isinstance(decider, OfflineDecider) and decider.lists_only is not every
