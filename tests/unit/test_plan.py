"""Unit tests of graphmem.retrieval.plan: a request and its recipe resolved into a Plan."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from graphmem.models import SearchRequest
from graphmem.retrieval.plan import Plan, resolve, window_list
from graphmem.retrieval.recipes import DEFAULT, PRESETS, Recipe

NOW = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)


def _plan(rs: Recipe | None = None, **kw: Any) -> Plan:
    body = {"query": "where did alice hike?", "owner": "alice", **kw}
    req = SearchRequest.model_validate(body)
    return resolve(req, (rs or DEFAULT).for_method(req.method), NOW)


@pytest.mark.parametrize(("method", "lists"), [
    ("fulltext", ("fulltext",)),
    ("vector", ("vector",)),
    ("rrf", ("vector", "fulltext")),
    ("rrf_expand", ("vector", "fulltext")),
    ("rrf_windows", ("vector", "fulltext", "window3_vector", "window3_fulltext",
                     "window5_vector", "window5_fulltext")),
])
def test_the_method_chooses_the_lists(method: str, lists: tuple[str, ...]) -> None:
    plan = _plan(method=method)
    assert plan.lists == lists
    assert plan.embed == (method != "fulltext")
    assert (plan.fulltext != "") == (method != "vector")
    assert not plan.session_prior  # off by default
    assert _plan(DEFAULT.with_(session_prior=True), method=method).session_prior == (
        method == "rrf_windows")


def test_window_lists_follow_the_settings() -> None:
    rs = DEFAULT.with_(window_sizes=(5,), window_indexes=("vector",))
    assert _plan(rs, method="rrf_windows").lists == ("vector", "fulltext", "window5_vector")
    assert window_list(3, "fulltext") == "window3_fulltext"
    # a single-index method never searches the other index of the windows either
    assert _plan(method="vector").lists == ("vector",)


def test_window_fusion_choices_follow_the_settings() -> None:
    plan = _plan(method="rrf_windows")
    assert plan.window_split and not plan.window_matched_only
    rs = DEFAULT.with_(window_split=False, window_matched_only=True)
    plan = _plan(rs, method="rrf_windows")
    assert not plan.window_split and plan.window_matched_only


def test_only_expanding_methods_expand_with_the_request_or_preset_window() -> None:
    assert _plan(method="rrf").expand is None
    assert _plan().expand == (1, 2)
    assert _plan(expand={"before": 0, "after": 4}).expand == (0, 4)
    assert _plan(PRESETS["wide"]).expand == (2, 3)
    assert _plan(method="rrf_windows").expand == (1, 2)


def test_budget_comes_from_the_request_then_the_preset() -> None:
    assert _plan().budget is None
    assert _plan(max_messages=7).budget == 7
    assert _plan(DEFAULT.with_(max_messages=30)).budget == 30
    assert _plan(DEFAULT.with_(max_messages=30), max_messages=5).budget == 5


def test_candidates_per_list_depend_on_the_budget() -> None:
    assert _plan(k=2).candidates == 20  # 3k, at least 20
    assert _plan(k=12).candidates == 36
    assert _plan(k=40).candidates == 50  # never more than the preset's
    assert _plan(k=2, max_messages=5).candidates == 50  # a budget ranks every candidate
    assert _plan(k=2).unit_candidates == 50


def test_time_hint_is_off_for_single_index_methods_and_now_is_as_of() -> None:
    assert _plan(method="vector").time_hint == "off"
    assert _plan(method="fulltext", time_hint="restrict").time_hint == "off"
    assert _plan(time_hint="restrict").time_hint == "restrict"
    assert _plan().now == NOW
    as_of = datetime(2023, 5, 1, tzinfo=UTC)
    assert _plan(as_of=as_of.isoformat()).now == as_of


def test_unit_lists_skip_fulltext_without_a_word() -> None:
    plan = resolve(SearchRequest(query="?!", owner="a", units="episodes"), DEFAULT,
                   NOW)
    assert plan.fulltext == "" and plan.unit_lists == ("vector",)
    assert _plan(units="observations", method="fulltext").unit_lists == ("fulltext",)
    assert _plan(units="both").messages and _plan(units="both").observations
    assert not _plan(units="episodes").messages


def test_plan_is_frozen() -> None:
    plan = _plan()
    with pytest.raises(AttributeError):
        plan.k = 3  # type: ignore[misc]


def test_the_graph_list_joins_method_graph_or_with_graph_list_every_expanding_method() -> None:
    assert _plan(method="graph").graph is not None
    assert _plan(method="rrf_windows").graph is None
    deep = PRESETS["deep"]
    assert _plan(deep, method="rrf_windows").graph is not None
    assert _plan(deep).graph is not None  # rrf_expand
    assert _plan(deep, method="rrf").graph is None  # rrf does not expand
    assert _plan(deep, method="vector").graph is None
