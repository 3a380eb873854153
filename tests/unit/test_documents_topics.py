"""The topic tree's pure parts: categories recovered from well-separated embeddings, ids kept
for unchanged members, keyphrase labels by class-based TF-IDF, the tree's shape."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from graphmem.documents.topics import Member, build, cluster, keyphrases, shape, topic_id

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = {0: "glacier ice melt snow", 1: "bread flour oven yeast", 2: "rocket orbit launch fuel"}


def _members(n_per: int, seed: int = 0) -> list[Member]:
    rng = np.random.default_rng(seed)
    centres = np.eye(3, 16)
    out = []
    for c in range(3):
        for i in range(n_per):
            v = centres[c] + rng.normal(0, 0.05, 16)
            out.append(Member(f"d{c}-{i}", v, f"{WORDS[c]} note {i}", T0 + timedelta(days=i)))
    return out


def test_separated_groups_are_the_categories_with_their_keyphrases() -> None:
    members = _members(4)
    nodes = build("alice", members)
    top = [n for n in nodes if n.level == 1]
    assert sorted(sorted(n.members) for n in top) == [
        sorted(f"d{c}-{i}" for i in range(4)) for c in range(3)]
    for n in top:
        c = int(n.members[0][1])
        assert any(w in n.label for w in WORDS[c].split())
        assert n.first_at == T0 and n.last_at == T0 + timedelta(days=3)
        assert abs(np.linalg.norm(n.centroid) - 1) < 1e-6


def test_a_rebuild_keeps_the_ids_of_unchanged_topics() -> None:
    members = _members(4)
    before = {n.id for n in build("alice", members) if n.level == 1}
    extra = Member("d0-new", np.eye(3, 16)[0], "glacier", T0)
    after = {n.id for n in build("alice", [*members, extra]) if n.level == 1}
    assert len(before & after) == 2  # the two categories that did not change
    assert topic_id("alice", ["b", "a"], 1) == topic_id("alice", ["a", "b"], 1)
    assert topic_id("bob", ["a", "b"], 1) != topic_id("alice", ["a", "b"], 1)


def test_small_inputs() -> None:
    assert build("alice", []) == []
    labels, score = cluster(np.eye(2, 4))
    assert list(labels) == [0, 0] and score == 0.0
    assert keyphrases(["the and of", "a an the"]) == ["", ""]


def test_shape() -> None:
    assert shape([(1, 5), (1, 3), (2, 2), (2, 3)]) == {
        "depth": 2, "categories": 2, "min": 3, "median": 5, "max": 5, "mean": 4.0}
