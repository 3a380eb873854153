"""Unit tests of graphmem.retrieval.iterative_search: the plans each round's recall runs."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.models import SearchRequest
from graphmem.retrieval import Recipe, recipe
from graphmem.retrieval.expansion import Selected
from graphmem.retrieval.iterative_search import iterative_messages
from graphmem.retrieval.plan import Plan, resolve
from graphmem.retrieval.rerank import for_lists
from graphmem.store.core import Row

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)
WINDOW_LISTS = resolve(SearchRequest(query="q", owner="o", method="rrf_windows"),
                       recipe("rrf_windows"), T0).lists
"""The recall lists of method rrf_windows, as its own plan has them."""


def _plans(rs: Recipe) -> list[Plan]:
    seen: list[Plan] = []

    def one_shot(plan: Plan) -> tuple[list[Selected], dict[str, Row], set[tuple[str, str]]]:
        seen.append(plan)
        return [], {}, set()

    req = SearchRequest(query="What does Bob play?", owner="o", method="iterative",
                        max_messages=5)
    iterative_messages(one_shot, req, rs)
    return seen


def test_by_default_rounds_run_rrf_windows_with_the_pagerank_list_and_its_ranker() -> None:
    plans = _plans(recipe("iterative"))
    assert plans and all(p.graph is not None for p in plans)
    first = plans[0]
    assert first.lists == WINDOW_LISTS and first.budget == 5
    assert first.ranker is not None and first.ranker is for_lists((*WINDOW_LISTS, "graph"))


def test_the_pagerank_list_can_be_left_out_and_the_base_changed() -> None:
    plans = _plans(recipe("iterative").with_(iterative_graph_list=False,
                                             iterative_base="rrf_expand"))
    assert plans and all(p.graph is None for p in plans)
    assert plans[0].lists == ("vector", "fulltext")
    assert plans[0].ranker is for_lists(("vector", "fulltext"))
