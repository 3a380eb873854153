"""The sentence ablation of the chunk re-ranking on a synthetic cache (no database, a toy
embedder): sentences are cut as chunking cuts them, each candidate gains its best sentence
similarity and its gap to the best, and the figures come with and without them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from graphmem.bench import chunk_sentences as cs
from graphmem.bench.chunk_ranker import questions_of
from tests.unit.test_chunk_ranker_training import _cache


class Toy:
    """Vectors that say whether a text names a word of the form w...x... (the synthetic gold)."""

    name = "toy"
    dimensions = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] if any(w.lower().startswith("w") and "x" in w for w in t.split())
                else [0.0, 1.0] for t in texts]


def test_sentences_are_cut_as_chunks_are() -> None:
    text = "The glacier moved. It left a valley behind! Then nothing"
    assert [text[s:e] for s, e in cs.sentences(text)] == [
        "The glacier moved.", "It left a valley behind!", "Then nothing"]
    assert cs.sentences("") == [(0, 0)]


def test_each_candidate_gains_its_best_sentence_and_the_gap() -> None:
    qs = questions_of(_cache())["alpha"][::8][:3]  # one question per document: ids unique
    texts = {r.id: f"Plain start. {r.text.capitalize()}"
             for q in qs for r in q.candidates[:len(q.rows)]}
    vectors = cs.sentence_vectors(Toy(), texts, "separate")
    assert all(v.shape == (2, 2) for v in vectors.values())
    got = cs.with_sentences(qs, [[1.0, 0.0]] * len(qs), vectors)
    for before, after in zip(qs, got, strict=True):
        for row, new, label in zip(before.rows, after.rows, after.labels, strict=True):
            assert new[:-2] == row
            assert new[-2:] == ([1.0, 0.0] if label else [0.0, -1.0])


def test_late_pooling_needs_an_embedder_that_can() -> None:
    with pytest.raises(SystemExit, match="--how separate"):
        cs.sentence_vectors(Toy(), {"c": "a text."}, "late")


def test_the_ablation_reports_both_sides_on_the_same_questions() -> None:
    out = cs.ablation(_cache(), Toy(), "separate")
    assert set(out["datasets"]) == {"alpha", "beta"}
    for row in out["datasets"].values():
        assert set(row) == {"without", "with"}
        assert row["with"]["questions"] == row["without"]["questions"]
        assert row["with"]["hit"]["1"] >= row["without"]["hit"]["1"]
    assert np.isclose(out["datasets"]["alpha"]["with"]["hit"]["1"], 1.0)
