"""The category-related lists of chunk search (pure)."""

from __future__ import annotations

import pytest

from graphmem.bench.documents import parse_method
from graphmem.documents.ranking import collapsed_tree, document_of, topic_list


def test_a_chunk_id_names_its_document_version() -> None:
    assert document_of("d-abc-v2:c17") == "d-abc-v2"


def test_the_topic_list_keeps_the_candidates_of_the_topic_documents_in_order() -> None:
    order = ["a-v1:c3", "b-v1:c0", "a-v1:c1", "c-v1:c2"]
    assert topic_list(order, {"a-v1", "c-v1"}) == [("a-v1:c3", 1), ("a-v1:c1", 2),
                                                   ("c-v1:c2", 3)]
    assert topic_list(order, set()) == []


def test_the_collapsed_tree_ranks_chunks_and_groups_in_one_pool() -> None:
    order = ["x", "y", "z", "w"]  # the fused order of the candidates
    chunks = [("y", 0.9), ("x", 0.7)]
    groups = [(0.8, ["w", "z", "not-a-candidate"]), (0.95, [])]
    # y (0.9), then the group at 0.8 gives z and w in fused order, then x (0.7)
    assert collapsed_tree(chunks, groups, order) == [("y", 1), ("z", 2), ("w", 3), ("x", 4)]


def test_a_chunk_counts_once_at_its_first_place_and_wins_a_tie() -> None:
    order = ["x", "y"]
    assert collapsed_tree([("x", 0.5)], [(0.5, ["y", "x"]), (0.9, ["y"])], order) == [
        ("y", 1), ("x", 2)]


def test_bench_method_names() -> None:
    assert parse_method("rrf") == ("rrf", None, 0.0, 0.0, 0.0)
    assert parse_method("rrf:4") == ("rrf", 4.0, 0.0, 0.0, 0.0)
    assert parse_method("rrf+topic+tree:2") == ("rrf", 2.0, 1.0, 1.0, 0.0)
    assert parse_method("rrf+tree=0.5") == ("rrf", None, 0.0, 0.5, 0.0)
    assert parse_method("rrf+topic+label") == ("rrf", None, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        parse_method("rrf+topics")
    with pytest.raises(ValueError):
        parse_method("bm25")
