"""Training the chunk ranker on a small synthetic cache of candidates (no database): the
grouped cross-validation never scores a question with a model fitted on its document, the
shipped form gives scikit-learn's probabilities, and the figures are those of the orders."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem.bench import chunk_ranker as cr
from graphmem.documents.rerank import DEPTH, ChunkRanker


def _cache(seed: int = 0, documents: int = 6, questions: int = 8) -> dict[str, Any]:
    """Questions whose gold chunk holds the query's rare word; the fused order puts it second
    or third, so a model reading the text can lift it."""
    rng = random.Random(seed)
    out: dict[str, Any] = {"datasets": {}}
    for name in ("alpha", "beta"):
        qs = []
        for d in range(documents):
            for n in range(questions):
                word = f"w{name}{d}x{n}"
                cands = []
                gold = rng.choice([1, 2])
                for i in range(6):
                    text = f"{word} appears here" if i == gold else "plain filler text"
                    cands.append({"id": f"d-{name}{d}-v1:c{i}", "fused": 1 / (60 + i),
                                  "doc": d, "start": 10 * i, "end": 10 * i + 9, "text": text,
                                  "title": None, "section": [], "ordinal": i,
                                  "label": int(i == gold)})
                lists = {"vector": [[c["id"], 0.9 - 0.1 * i] for i, c in enumerate(cands)],
                         "fulltext": [[cands[gold]["id"], 3.0]]}
                qs.append({"id": f"{name}{d}{n}", "query": f"where is {word}?", "doc": d,
                           "lists": lists, "candidates": cands})
        out["datasets"][name] = qs
    return out


def test_the_re_ranker_lifts_the_gold_chunk_cross_validated() -> None:
    figures = cr.evaluate(_cache(), ("logistic",), depth=6)
    for name in ("alpha", "beta"):
        row = figures["datasets"][name]
        assert row["rrf"]["hit"]["1"] == 0.0
        assert row["rrf"]["hit"]["5"] == 1.0
        assert row["fulltext"]["hit"]["1"] == 1.0
        for key in ("rerank-logistic (cv)", "rerank-logistic (pooled, cv)",
                    "rerank-logistic (trained on the other file)"):
            assert row[key]["hit"]["1"] == 1.0 and row[key]["mrr10"] == 1.0
            assert row[key]["questions"] == 48


def test_folds_hold_whole_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    qs = cr.questions_of(_cache(), 6)["alpha"]
    fitted: list[set[int]] = []
    real = cr.matrix

    def spy(part: list[cr.Question], depth: int = DEPTH) -> Any:
        fitted.append({q.group for q in part})
        return real(part, depth)

    monkeypatch.setattr(cr, "matrix", spy)
    scores = cr.grouped_cv(qs, "logistic", 6, folds=3)
    assert sorted(scores) == list(range(len(qs)))
    assert len(fitted) == 3
    for groups in fitted:  # each fold's model saw only the other folds' documents
        assert 0 < len(groups) < 6


def test_the_shipped_form_gives_scikit_learns_probabilities(tmp_path: Path) -> None:
    qs = [q for v in cr.questions_of(_cache(1), 6).values() for q in v]
    x, y, _ = cr.matrix(qs, 6)
    model = cr.fit(x, y, "logistic", cr.balance(qs, 6))
    ranker = cr.ranker_of(model, "about", 6)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(ranker.to_json()))
    again = ChunkRanker.from_json(json.loads(path.read_text()))
    expected = model.predict_proba(x[:20])[:, 1]
    got = np.asarray([again.probability(list(row)) for row in x[:20]])
    assert np.allclose(got, expected, atol=1e-9)


def test_balance_gives_each_file_the_same_weight() -> None:
    cache = _cache()
    cache["datasets"]["beta"] = cache["datasets"]["beta"][:12]
    qs = [q for v in cr.questions_of(cache, 6).values() for q in v]
    w = cr.balance(qs, 6)
    per = {"alpha": 0.0, "beta": 0.0}
    at = 0
    for q in qs:
        n = len(cr.rows_of(q, 6))
        per[q.dataset] += float(w[at:at + n].sum())
        at += n
    assert per["alpha"] == pytest.approx(per["beta"])
