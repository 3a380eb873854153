"""Unit tests of graphmem.retrieval.recipes: the stages, the named recipes of every method and
preset, deriving variants, and the ranker each recipe names."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import pytest

from graphmem.errors import InvalidInput
from graphmem.models import Method, SearchRequest
from graphmem.retrieval import rerank
from graphmem.retrieval.plan import Plan, reranked_lists, resolve
from graphmem.retrieval.recipes import (
    DEFAULT,
    FIELDS,
    PRESETS,
    RECIPES,
    STAGES,
    Recipe,
    recipe,
)

NOW = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
DEFAULTS: dict[str, Any] = {
    "rrf_k": 60, "candidates": 50, "overfetch": 8, "one_round_trip": True, "expand_before": 1,
    "expand_after": 2, "neighbour_decay": 0.35, "normalise_time": True, "max_messages": None,
    "window_sizes": (3, 5), "window_indexes": ("vector", "fulltext"), "window_split": True,
    "window_matched_only": False, "session_prior": False, "session_depth": 1,
    "iterative_base": "rrf_windows", "iterative_graph_list": True,
    "iterative_every_question": True, "iterative_rounds": 3, "iterative_queries": 3,
    "iterative_patience": 1, "iterative_fallback": 5, "iterative_core_share": 0.5,
    "iterative_follow_up_weight": 1.0, "iterative_follow_up_depth": 10,
    "iterative_max_tokens": None, "iterative_shown": 12, "graph_list": False,
    "graph_weight": 1.0, "graph_alpha": 0.5, "graph_seeds": 5, "graph_query_share": 0.3,
    "graph_max_degree": 30, "rerank": True, "embedding": "minilm/sentence", "sparse": False,
    "sparse_weight": 1.0,
}
"""The values of every retrieval knob before they were split into stages."""
CHANGED: dict[str, dict[str, Any]] = {
    "default": {},
    "fast": {"candidates": 20, "overfetch": 4, "expand_before": 0, "expand_after": 1,
             "iterative_every_question": False, "rerank": False},
    "wide": {"candidates": 100, "overfetch": 10, "expand_before": 2, "expand_after": 3},
    "deep": {"graph_list": True},
}
"""What each preset changed from the defaults."""


def _flat(r: Recipe) -> dict[str, Any]:
    return {k: v for k, v in r.flat().items() if k not in ("method", "ranker")}


@pytest.mark.parametrize("name", ["default", "fast", "wide", "deep"])
@pytest.mark.parametrize("method", get_args(Method))
def test_every_method_has_a_recipe_per_preset_with_the_preset_s_values(
        name: str, method: Method) -> None:
    r = recipe(method, name)
    assert isinstance(r, Recipe)
    assert r is RECIPES[name, method]
    assert (r.method, r.preset, r.name) == (method, name, f"{name}/{method}")
    assert _flat(r) == {**DEFAULTS, **CHANGED[name]}


def test_the_stage_fields_are_the_knobs_each_once() -> None:
    assert sorted(FIELDS) == sorted([*DEFAULTS, "ranker"])


def test_default_preset_is_the_plain_default() -> None:
    assert PRESETS["default"] is DEFAULT == recipe("rrf_expand") == Recipe()
    assert recipe("rrf_expand").fusion.rrf_k == 60


def test_fast_is_narrower_and_wide_is_wider_than_default() -> None:
    fast, default, wide = (recipe("rrf_expand", p) for p in ("fast", "default", "wide"))
    assert fast.lists.candidates < default.lists.candidates < wide.lists.candidates
    x = [r.expansion.expand_before + r.expansion.expand_after for r in (fast, default, wide)]
    assert x[0] < x[1] < x[2]


def test_unknown_preset_raises_invalid_input_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as info:
        recipe("rrf_expand", "nope")
    assert info.value.field == "preset"
    assert "nope" in info.value.detail
    assert "default" in info.value.problem  # it lists the known names


def test_with_returns_a_changed_copy_and_leaves_the_original() -> None:
    original = recipe("rrf_windows")
    changed = original.with_(candidates=7, max_messages=12, graph_alpha=0.6)
    assert changed.lists.candidates == 7
    assert changed.expansion.max_messages == 12
    assert changed.walk.graph_alpha == 0.6
    assert changed.fusion == original.fusion and changed.method == "rrf_windows"
    assert original.lists.candidates == 50
    assert original.expansion.max_messages is None
    assert changed is not original
    assert original.with_(lists=changed.lists).lists.candidates == 7  # a whole stage


def test_with_on_a_preset_does_not_change_the_preset() -> None:
    before = RECIPES["fast", "rrf_expand"]
    recipe("rrf_expand", "fast").with_(candidates=999)
    assert RECIPES["fast", "rrf_expand"] == before
    assert recipe("rrf_expand", "fast").lists.candidates == 20


def test_recipes_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.lists.candidates = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.method = "rrf"  # type: ignore[misc]


def test_with_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError):
        DEFAULT.with_(no_such_knob=1)


@pytest.mark.parametrize(("method", "graph", "ranker"), [
    ("rrf_expand", False, "rrf_expand"), ("rrf_expand", True, "graph"),
    ("graph", False, "graph"), ("graph", True, "graph"),
    ("rrf_windows", False, "rrf_windows"), ("rrf_windows", True, "rrf_windows_graph"),
    ("rrf", False, None), ("vector", True, None), ("fulltext", False, None),
    ("iterative", False, "rrf_expand"), ("iterative", True, "graph"),
])
def test_a_recipe_names_the_ranker_of_its_shape(method: Method, graph: bool,
                                                ranker: str | None) -> None:
    assert recipe(method, "deep" if graph else "default").reranking.ranker == ranker
    # a variant of another method or graph list names that shape's ranker, unless told
    assert DEFAULT.with_(method=method, graph_list=graph).reranking.ranker == ranker
    assert DEFAULT.with_(method=method, ranker="mine").reranking.ranker == "mine"


@pytest.mark.parametrize("r", list(RECIPES.values()), ids=lambda r: r.name)
@pytest.mark.parametrize("sparse", [False, True])
def test_every_recipe_finds_the_ranker_of_its_lists(r: Recipe, sparse: bool) -> None:
    """The ranker a recipe names is the shipped one trained on its plan's lists, under every
    embedding rankers are shipped for: none is missing."""
    for embedding in {e for e, _ in rerank.shipped()}:
        served = r.served(embedding, sparse)
        for one in [served, served.rounds()] if r.method == "iterative" else [served]:
            plan = resolve(SearchRequest(query="q", owner="o", method=one.method), one, NOW)
            assert plan.no_ranker is None
            if one.reranking.rerank and plan.expand is not None:
                assert plan.ranker is not None
                assert plan.ranker is rerank.for_lists(reranked_lists(plan.lists, plan.graph),
                                                       embedding)
            else:
                assert plan.ranker is None


def test_a_missing_ranker_keeps_the_fused_order_and_says_so_once(
        caplog: pytest.LogCaptureFixture) -> None:
    req = SearchRequest(query="q", owner="o", method="rrf_windows")
    caplog.set_level(logging.WARNING, logger="graphmem.retrieval.rerank")
    for variant in [recipe("rrf_windows").with_(ranker="not-shipped")] * 2:
        plan = resolve(req, variant, NOW)
        assert plan.ranker is None and plan.decay == 0.35
        assert plan.no_ranker is not None and "not-shipped" in plan.no_ranker
    other = resolve(req, recipe("rrf_windows").with_(window_sizes=(3,)), NOW)  # other lists
    assert other.ranker is None and other.no_ranker is not None
    assert "trained on lists" in other.no_ranker
    warned = [r.getMessage() for r in caplog.records]
    assert len([m for m in warned if "not-shipped" in m]) == 1
    assert resolve(req, recipe("rrf_windows").with_(ranker=None), NOW).no_ranker is None


def test_a_recipe_is_for_its_method() -> None:
    with pytest.raises(ValueError, match="not for method"):
        resolve(SearchRequest(query="q", owner="o", method="graph"), DEFAULT, NOW)


def test_served_sets_the_sparse_list_the_embedding_and_turns_rerank_off_without_rankers() -> None:
    r = recipe("rrf_windows").served("e5/passage", sparse=True, ranked=False)
    assert r.lists.sparse and r.reranking.embedding == "e5/passage"
    assert not r.reranking.rerank and r.reranking.ranker == "rrf_windows"
    assert recipe("rrf_windows", "fast").served("minilm/sentence", False).reranking.rerank is False


def test_the_rounds_of_iterative_run_its_base_with_the_graph_list() -> None:
    it = recipe("iterative", "wide")
    rounds = it.rounds()
    assert (rounds.method, rounds.walk.graph_list) == ("rrf_windows", True)
    assert rounds.reranking.ranker == "rrf_windows_graph"
    assert rounds.lists == it.lists and rounds.expansion == it.expansion
    alone = it.with_(iterative_graph_list=False, iterative_base="rrf_expand").rounds()
    assert (alone.method, alone.walk.graph_list, alone.reranking.ranker) == (
        "rrf_expand", False, "rrf_expand")
    with pytest.raises(ValueError, match="iterative_base"):
        it.with_(iterative_base="graph").rounds()


def test_the_contributors_checklist_names_the_stages_and_what_exists() -> None:
    """docs/architecture.md, "Checklist: add a recall list", against the tree: it names every
    stage of a recipe, and each ``graphmem.`` name and path it gives exists."""
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## Checklist: add a recall list", 1)[1].split("\n## ", 1)[0]
    quoted = set(re.findall(r"`([^`]+)`", section))
    assert {cls.__name__ for cls in STAGES.values()} <= quoted
    assert {"Recipe.with_", "Rerank.ranker", "no_ranker"} <= quoted
    assert hasattr(Recipe, "with_") and "no_ranker" in Plan.__dataclass_fields__
    for name in (q for q in quoted if q.startswith("graphmem.")):
        module, _, attr = name.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), name
    for path in (q for q in quoted if "/" in q and "<" not in q and " " not in q):
        assert (root / path).exists(), path
