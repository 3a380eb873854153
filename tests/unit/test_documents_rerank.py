"""The learned re-ranking of chunks on hand-made candidates: its features, its scoring and
order, the shipped file, and the fallback when no ranker is shipped for an embedder."""

from __future__ import annotations

import logging
import math
from typing import get_args

import pytest

from graphmem.config import Settings
from graphmem.documents import rerank as rr
from graphmem.documents.rerank import ChunkRanker, Row, feature_names, features, stem, terms
from graphmem.retrieval.fusion import Fused

NAMES = feature_names()


def _col(rows: list[list[float]], name: str) -> list[float]:
    i = NAMES.index(name)
    return [r[i] for r in rows]


def _ranker(weights: dict[str, float], intercept: float = 0.0) -> ChunkRanker:
    n = len(NAMES)
    return ChunkRanker(rr.LISTS, 2, (0.0,) * n, (1.0,) * n,
                       tuple(weights.get(f, 0.0) for f in NAMES), intercept)


def test_terms_drop_stop_words_and_fold_plurals() -> None:
    assert terms("What are the cells of the Viruses?") == ["cell", "virus"]
    assert stem("studies") == "study" and stem("virus") == "virus" and stem("glass") == "glass"


def test_list_features_rank_score_and_absence() -> None:
    rows = [Row("d-1-v1:c0", 0.03, "alpha"), Row("d-1-v1:c1", 0.02, "beta")]
    lists = {"vector": [("d-1-v1:c1", 0.8), ("d-1-v1:c0", 0.4)], "fulltext": [("d-1-v1:c0", 5.0)]}
    got = features("alpha", rows, lists)
    assert _col(got, "vector.rrf") == [1 / 61, 1 / 60]
    assert _col(got, "vector.relative") == [0.5, 1.0]
    assert _col(got, "fulltext.score") == [5.0, 0.0]
    assert _col(got, "fulltext.found") == [1.0, 0.0]
    assert _col(got, "fulltext.log_rank") == [0.0, math.log1p(rr.ABSENT_RANK)]
    assert _col(got, "fused") == [1.0, pytest.approx(2 / 3)]
    assert _col(got, "log_position") == [0.0, math.log1p(1)]


def test_text_features_coverage_pairs_proximity_heading_numbers() -> None:
    query = "When did the Apollo program land on the Moon in 1969?"
    near = Row("d-a-v1:c3", 0.02, "The Apollo program would land on the Moon first, in "
               "1969.", "Apollo", ("History", "Moon landing"), 3)
    far = Row("d-a-v1:c4", 0.01, "Apollo was a god. " + "Filler words here. " * 10
              + "The program ended. Astronauts flew to the Moon.", "Apollo", (), 4)
    none = Row("d-b-v1:c0", 0.01, "Nothing relevant at all.", "Other", (), 0)
    got = features(query, [near, far, none], {})
    coverage = _col(got, "coverage")
    assert coverage[0] > coverage[1] > coverage[2] == 0.0
    assert _col(got, "idf_coverage")[0] == pytest.approx(1.0)
    assert _col(got, "idf_gap")[0] == 0.0 and _col(got, "idf_gap")[2] > 0
    bigrams = _col(got, "bigrams")
    assert bigrams[0] > 0 and bigrams[2] == 0.0
    proximity = _col(got, "proximity")
    assert proximity[0] > proximity[1]
    heading = _col(got, "heading")
    assert heading[0] > heading[2]  # "apollo" and "moon" in its title and section path
    assert _col(got, "numbers") == [1.0, 0.0, 0.0]
    assert _col(got, "log_ordinal")[0] == math.log1p(3)
    share = _col(got, "document_share")
    assert share[:2] == [pytest.approx(2 / 3)] * 2 and share[2] == pytest.approx(1 / 3)
    assert _col(got, "document_first") == [0.0, 0.0, math.log1p(2)]
    assert _col(got, "document_fused") == [pytest.approx(0.75)] * 2 + [pytest.approx(0.25)]
    best = _col(got, "idf_coverage")[0]
    assert _col(got, "document_text") == [best, best, 0.0]  # its document's best coverage


def test_rerank_orders_by_probability_and_marks_the_rule() -> None:
    fused = [Fused("d-1-v1:c0", 0.03, ("vector",), 0), Fused("d-1-v1:c1", 0.02, ("fulltext",), 0),
             Fused("d-1-v1:c2", 0.01, ("vector",), 3)]
    rows = [Row("d-1-v1:c0", 0.03, "unrelated text"), Row("d-1-v1:c1", 0.02, "glacier ice")]
    ranker = _ranker({"coverage": 5.0}, -1.0)
    out = rr.rerank(ranker, "glacier ice", fused, rows, {})
    assert [f.id for f in out] == ["d-1-v1:c1", "d-1-v1:c0", "d-1-v1:c2"]
    assert out[0].rules == ("fulltext", rr.RULE) and out[1].rules == ("vector", rr.RULE)
    assert out[0].score == pytest.approx(1 / (1 + math.exp(-4.0)))
    assert out[2].rules == ("vector",) and out[2].score == pytest.approx(out[1].score / 2)


def test_equal_probabilities_keep_the_fused_order() -> None:
    fused = [Fused(f"d-1-v1:c{i}", 1 / (60 + i), ("vector",), i) for i in range(3)]
    rows = [Row(f.id, f.score, "same") for f in fused]
    out = rr.rerank(_ranker({}), "other", fused, rows, {})
    assert [f.id for f in out] == [f.id for f in fused]


def test_apply_reads_the_head_and_skips_what_is_gone() -> None:
    class Store:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def chunks(self, ids: list[str], reach: int = 0) -> list[dict[str, object]]:
            self.asked = ids
            return [{"id": i, "text": "glacier" if i.endswith("c2") else "x", "title": None,
                     "section": [], "ordinal": 0} for i in ids if not i.endswith("c1")]

    fused = [Fused(f"d-1-v1:c{i}", 1 / (60 + i), ("vector",), i) for i in range(4)]
    store = Store()
    out, _ = rr.apply(_ranker({"coverage": 5.0}), store, "glacier", fused, {}, k=3)
    assert store.asked == [f.id for f in fused[:3]]
    assert out[0].id == "d-1-v1:c2"
    assert [f.id for f in out[2:]] == ["d-1-v1:c1", "d-1-v1:c3"]  # not read: fused order


def test_ranker_round_trips_and_refuses_other_features() -> None:
    ranker = _ranker({"coverage": 2.0}, 0.5)
    again = ChunkRanker.from_json(ranker.to_json())
    assert again == ranker
    row = [0.1] * len(NAMES)
    assert again.probability(row) == pytest.approx(ranker.probability(row))
    with pytest.raises(ValueError):
        ChunkRanker.from_json({**ranker.to_json(), "features": ["x"]})
    with pytest.raises(ValueError):
        ChunkRanker(rr.LISTS, 2, (0.0,), (1.0,), (0.0,), 0.0)


def test_standardisation_is_folded_into_the_weights() -> None:
    n = len(NAMES)
    mean = tuple(float(i) for i in range(n))
    scale = tuple(float(i + 1) for i in range(n))
    coef = tuple(0.1 * (i % 3) for i in range(n))
    ranker = ChunkRanker(rr.LISTS, 2, mean, scale, coef, 0.2)
    row = [float(i) * 0.7 for i in range(n)]
    z = 0.2 + sum(c * (x - m) / s for c, x, m, s in zip(coef, row, mean, scale, strict=True))
    assert ranker.probability(row) == pytest.approx(1 / (1 + math.exp(-z)))


def test_a_missing_ranker_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="graphmem.documents.rerank"):
        ranker, why = rr.for_embedder("no-such-embedder")
        again, _ = rr.for_embedder("no-such-embedder")
    assert ranker is None and again is None
    assert why is not None and "no-such-embedder" in why
    assert sum("fused order stands" in r.getMessage() for r in caplog.records) == 1


def test_every_embedder_choice_ships_a_chunk_ranker() -> None:
    choices = set(get_args(Settings.model_fields["embedder"].annotation))
    assert set(rr.shipped()) == choices
    for embedder, ranker in rr.shipped().items():
        assert ranker.embedder == embedder
        assert rr.for_embedder(embedder) == (ranker, None)
