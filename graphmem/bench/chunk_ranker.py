"""Training the learned re-ranking of chunk search (`graphmem.documents.rerank`) on SQuAD-format
files of documents and questions (the development halves of `graphmem bench documents`).

``collect`` stores each file's articles as the benchmark does, runs every question's vector and
fulltext lists as `Documents.search` runs them (the same depth, filters and fusion), and keeps
each fused candidate with what the ranker reads (its lists' ranks and scores, its text, title,
section path and place) and whether it hits the question's gold passage. The candidates are
written to a JSON cache, so the model can be fitted and cross-validated again without Neo4j.

``evaluate`` scores, on the same questions in one pass: the fused order (``rrf``), the fulltext
list alone, and the re-ranked order under grouped cross-validation (folds by article or paper:
no document is in both the training and the test part of a fold), plus training on one file and
testing on the other. ``python -m graphmem.bench.chunk_ranker --out FILE`` writes the ranker the
search reads.
"""

from __future__ import annotations

import json
import math
import secrets
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphmem.bench.documents import KS, Dataset, covers, ingest, load, owner_of
from graphmem.config import Settings
from graphmem.documents.models import ChunkSearch
from graphmem.documents.rerank import (
    DEPTH,
    LISTS,
    RRF_K,
    ChunkRanker,
    Row,
    feature_names,
    features,
)
from graphmem.documents.service import (
    FULLTEXT_WEIGHT,
    Documents,
    chunk_filters,
    list_depth,
    ranks,
)
from graphmem.embeddings import query_vectors
from graphmem.retrieval.fulltext import lucene_escape
from graphmem.retrieval.fusion import fuse
from graphmem.service import Memory
from graphmem.store import TenantStores

SEARCH_K = 20
"""The benchmark's k: the lists are read ``max(CANDIDATES, 2k)`` deep, as the search reads them."""
FOLDS = 5
Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Question:
    """One question's fused candidates (best first), each a row of what the ranker reads."""

    dataset: str
    group: int
    """The article or paper the question is about (the cross-validation's groups)."""
    query: str
    candidates: list[Row]
    labels: list[int]
    fulltext: list[int]
    """Indexes into ``candidates`` of the fulltext list's hits, in its order."""
    lists: dict[str, list[tuple[str, float]]]
    """Each recall list's hits (id, score), best first."""
    rows: list[list[float]]
    """The features of the first ``depth`` candidates (`questions_of`)."""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- collecting (Neo4j) ------------------------------------------------------------------------
def collect_dataset(mem: Memory, docs: Documents, stores: TenantStores, ds: Dataset,
                    limit: int | None = None) -> list[dict[str, Any]]:
    """Every question's fused candidates with their lists' ranks and scores, records and labels
    (a JSON-ready dict per question)."""
    owner = owner_of(ds.name)
    store = stores.documents
    n = list_depth(SEARCH_K)
    out = []
    t0 = time.perf_counter()
    for i, q in enumerate(ds.questions[:limit]):
        filters = chunk_filters(ChunkSearch(query=q.text, owner=owner, k=SEARCH_K))
        vector = query_vectors(mem.embedder, [q.text])[0]
        lists = {"vector": store.vector_search(owner, vector, n, 2, filters),
                 "fulltext": store.fulltext_search(owner, lucene_escape(q.text), n, 2, filters)}
        fused = fuse(ranks(lists), RRF_K, {"fulltext": FULLTEXT_WEIGHT})
        records = {r["id"]: r for r in store.chunks([f.id for f in fused], 0)}
        cands = []
        for f in fused:
            r = records.get(f.id)
            if r is None:
                continue
            doc = int(str(r["key"]).rsplit("/", 1)[1])
            cands.append({
                "id": f.id, "fused": f.score, "doc": doc, "start": r["start"], "end": r["end"],
                "text": r["text"], "title": r["title"], "section": list(r["section"] or []),
                "ordinal": r["ordinal"],
                "label": int(doc == q.doc and covers((r["start"], r["end"]), q.gold))})
        out.append({"id": q.id, "query": q.text, "doc": q.doc,
                    "lists": {k: [[id_, s] for id_, s in v] for k, v in lists.items()},
                    "candidates": cands})
        if (i + 1) % 500 == 0:
            _log(f"  {ds.name}: {i + 1} questions in {time.perf_counter() - t0:.0f} s")
    return out


def collect(settings: Settings, data: Sequence[Path], cache: Path,
            limit: int | None = None) -> dict[str, Any]:
    """Store each file in a throwaway tenant, collect its questions' candidates, write them to
    ``cache`` (after each file) and delete the tenant's documents."""
    mem = Memory.open(settings)
    docs = Documents(settings.model_copy(update={"document_inline_chunks": 10_000}),
                     mem.embedder, mem.search_pool)
    tenant = f"bench-rerank-{secrets.token_hex(4)}"
    out: dict[str, Any] = {"embedder": mem.embedder.name, "datasets": {}}
    try:
        for path in data:
            ds = load(path)
            _log(f"{ds.name}: {len(ds.texts)} documents, {len(ds.questions)} questions")
            throughput, _ = ingest(docs, mem.stores(tenant), ds)
            _log(f"  ingest: {throughput['chars_per_s']:.0f} chars/s")
            out["datasets"][ds.name] = collect_dataset(mem, docs, mem.stores(tenant), ds, limit)
            cache.write_text(json.dumps(out) + "\n", encoding="utf-8")
    finally:
        for path in data:
            mem.store.tenant(tenant).delete_owner(owner_of(path.stem))
        mem.close()
    return out


# --- fitting and scoring (no database) ---------------------------------------------------------
def questions_of(cached: Mapping[str, Any], depth: int = DEPTH) -> dict[str, list[Question]]:
    """The cache's questions per dataset: every fused candidate, the features of the first
    ``depth``."""
    out: dict[str, list[Question]] = {}
    for name, qs in cached["datasets"].items():
        got = []
        for q in qs:
            cands = q["candidates"]
            index = {c["id"]: i for i, c in enumerate(cands)}
            lists = {k: [(str(a), float(b)) for a, b in v] for k, v in q["lists"].items()}
            rows = [Row(c["id"], float(c["fused"]), c["text"], c["title"], c["section"],
                        int(c["ordinal"])) for c in cands]
            got.append(Question(name, int(q["doc"]), q["query"], rows,
                                [int(c["label"]) for c in cands],
                                [index[i] for i, _ in lists.get("fulltext", []) if i in index],
                                lists, features(q["query"], rows[:depth], lists)))
        out[name] = got
    return out


def rows_of(q: Question, depth: int = DEPTH) -> list[list[float]]:
    """The features of ``q``'s first ``depth`` candidates (computed once, `questions_of`)."""
    return q.rows[:depth]


def matrix(qs: Sequence[Question], depth: int = DEPTH) -> tuple[Matrix, npt.NDArray[np.int_],
                                                                  npt.NDArray[np.int_]]:
    """Features, labels and groups (each file's article or paper as an int) of every question's
    first ``depth`` candidates."""
    x: list[list[float]] = []
    y: list[int] = []
    g: list[int] = []
    keys: dict[tuple[str, int], int] = {}
    for q in qs:
        rows = rows_of(q, depth)
        x += rows
        y += q.labels[:len(rows)]
        g += [keys.setdefault((q.dataset, q.group), len(keys))] * len(rows)
    return (np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.int_),
            np.asarray(g, dtype=np.int_))


def first_hit(labels: Sequence[int], order: Sequence[int]) -> int | None:
    """The 1-based rank of the first hit in ``order`` (indexes into ``labels``), within 10."""
    return next((r + 1 for r, i in enumerate(order[:10]) if labels[i]), None)


def summary(ranks: Sequence[int | None]) -> dict[str, Any]:
    n = len(ranks) or 1
    return {"hit": {str(k): sum(1 for r in ranks if r and r <= k) / n for k in KS},
            "mrr10": math.fsum(1 / r for r in ranks if r) / n, "questions": len(ranks)}


def reranked_order(q: Question, scores: Sequence[float], depth: int = DEPTH) -> list[int]:
    """The first ``depth`` candidates by score (ties: fused order), then the rest as fused."""
    head = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return head + list(range(len(scores), len(q.candidates)))


def score_orders(qs: Sequence[Question],
                 scorer: Callable[[Question], Sequence[float]] | None,
                 depth: int = DEPTH) -> dict[str, Any]:
    """hit@k and MRR@10 of ``scorer``'s re-ranking (None: the fused order)."""
    ranks = []
    for q in qs:
        order = list(range(len(q.candidates))) if scorer is None else reranked_order(
            q, scorer(q), depth)
        ranks.append(first_hit(q.labels, order))
    return summary(ranks)


def fulltext_figures(qs: Sequence[Question]) -> dict[str, Any]:
    return summary([first_hit(q.labels, q.fulltext) for q in qs])


def balance(qs: Sequence[Question], depth: int = DEPTH) -> Matrix:
    """Per candidate row (as `matrix` lays them out), a weight that gives every file the same
    total weight: without it the larger file (SQuAD, 5,397 questions against 841) decides the
    model."""
    sizes: dict[str, int] = {}
    for q in qs:
        sizes[q.dataset] = sizes.get(q.dataset, 0) + 1
    w = [len(qs) / (len(sizes) * sizes[q.dataset]) for q in qs for _ in rows_of(q, depth)]
    return np.asarray(w, dtype=np.float64)


def fit(x: Matrix, y: npt.NDArray[np.int_], kind: str = "logistic",
        weights: Matrix | None = None) -> Any:
    """A scikit-learn model of P(hit | features): ``logistic`` (standardised, L2) or ``hgb``
    (histogram gradient boosting, shallow); ``weights`` per row (`balance`)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "logistic":
        model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    elif kind == "hgb":
        model = HistGradientBoostingClassifier(max_depth=4, max_iter=200, learning_rate=0.05,
                                               l2_regularization=1.0, random_state=0)
    else:
        raise ValueError(f"unknown model {kind!r} (logistic, hgb)")
    if weights is None:
        model.fit(x, y)
    elif kind == "logistic":
        model.fit(x, y, logisticregression__sample_weight=weights)
    else:
        model.fit(x, y, sample_weight=weights)
    return model


def ranker_of(model: Any, about: str = "", depth: int = DEPTH) -> ChunkRanker:
    """The shipped form of a fitted logistic pipeline (its scaler folded into the weights)."""
    scaler, logistic = model[0], model[-1]
    return ChunkRanker(LISTS, depth, tuple(map(float, scaler.mean_)),
                       tuple(float(s) if s else 1.0 for s in scaler.scale_),
                       tuple(map(float, logistic.coef_[0])), float(logistic.intercept_[0]),
                       about)


def grouped_cv(qs: Sequence[Question], kind: str, depth: int = DEPTH,
               folds: int = FOLDS) -> dict[int, list[float]]:
    """Grouped k-fold over the questions' documents: each question's candidates (by index in
    ``qs``) scored by a model fitted on the folds that hold none of its document's
    questions."""
    from sklearn.model_selection import GroupKFold

    keys = {k: n for n, k in enumerate(sorted({(q.dataset, q.group) for q in qs}))}
    groups = np.asarray([keys[q.dataset, q.group] for q in qs])  # stable from run to run
    scores: dict[int, list[float]] = {}
    for train, test in GroupKFold(n_splits=min(folds, len(set(groups)))).split(
            np.zeros(len(qs)), groups=groups):
        part = [qs[i] for i in train]
        x, y, _ = matrix(part, depth)
        model = fit(x, y, kind, balance(part, depth))
        for i in test:
            rows = rows_of(qs[i], depth)
            scores[i] = list(model.predict_proba(np.asarray(rows))[:, 1]) if rows else []
    return scores


def cv_figures(qs: Sequence[Question], scores: Mapping[int, Sequence[float]],
               dataset: str | None = None, depth: int = DEPTH) -> dict[str, Any]:
    """hit@k and MRR@10 of the cross-validated re-ranking, over ``dataset``'s questions (or
    all)."""
    index = {id(q): i for i, q in enumerate(qs)}
    chosen = [q for q in qs if dataset is None or q.dataset == dataset]
    return score_orders(chosen, lambda q: scores[index[id(q)]], depth)


def transfer(train: Sequence[Question], test: Sequence[Question], kind: str,
             depth: int = DEPTH) -> dict[str, Any]:
    """Fitted on ``train``, scored on ``test`` (another file: unseen documents and style)."""
    x, y, _ = matrix(train, depth)
    model = fit(x, y, kind)
    return score_orders(test, lambda q: list(model.predict_proba(np.asarray(
        rows_of(q, depth)))[:, 1]) if q.candidates else [], depth)


def evaluate(cached: Mapping[str, Any], kinds: Sequence[str] = ("logistic", "hgb"),
             depth: int = DEPTH) -> dict[str, Any]:
    """Per dataset, on the same questions: rrf (fused order), fulltext, and each model kind
    cross-validated by document; then each kind trained on one file and tested on the other,
    and on both files pooled (grouped folds over both)."""
    qs = questions_of(cached, depth)
    out: dict[str, Any] = {"depth": depth, "features": list(feature_names()), "datasets": {}}
    for name, got in qs.items():
        row: dict[str, Any] = {"rrf": score_orders(got, None, depth),
                               "fulltext": fulltext_figures(got)}
        for kind in kinds:
            row[f"rerank-{kind} (cv)"] = cv_figures(got, grouped_cv(got, kind, depth))
        for kind in kinds:
            others = [q for n, v in qs.items() if n != name for q in v]
            if others:
                row[f"rerank-{kind} (trained on the other file)"] = transfer(others, got, kind,
                                                                             depth)
        out["datasets"][name] = row
        _log(f"{name}: " + "; ".join(f"{k} {brief(v)}" for k, v in row.items()))
    if len(qs) > 1:  # both files pooled, as the shipped ranker is trained
        everything = [q for v in qs.values() for q in v]
        for kind in kinds:
            pooled = grouped_cv(everything, kind, depth)
            for name in qs:
                figures = cv_figures(everything, pooled, name, depth)
                out["datasets"][name][f"rerank-{kind} (pooled, cv)"] = figures
                _log(f"{name}: rerank-{kind} (pooled, cv) {brief(figures)}")
    return out


def brief(r: Mapping[str, Any]) -> str:
    return (f"@1 {r['hit']['1']:.3f} @5 {r['hit']['5']:.3f} @10 {r['hit']['10']:.3f} "
            f"mrr {r['mrr10']:.3f}")


def about(figures: Mapping[str, Any], files: Sequence[str]) -> str:
    """What the shipped ranker was trained on and what it scored, cross-validated."""
    parts = []
    for name, row in figures["datasets"].items():
        cv = row.get("rerank-logistic (pooled, cv)")
        if cv is not None:
            parts.append(f"{name}: rrf {brief(row['rrf'])}; re-ranked, cross-validated by "
                         f"document {brief(cv)}")
    return (f"logistic regression over {len(figures['features'])} features of the first "
            f"{figures['depth']} fused candidates, trained on {', '.join(files)}. "
            + " | ".join(parts))


def train(cached: Mapping[str, Any], depth: int = DEPTH, about_text: str = "") -> ChunkRanker:
    """The logistic ranker fitted on every question of every file in the cache."""
    qs = [q for v in questions_of(cached, depth).values() for q in v]
    x, y, _ = matrix(qs, depth)
    return ranker_of(fit(x, y, "logistic", balance(qs, depth)), about_text, depth)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``python -m graphmem.bench.chunk_ranker --data FILE [--data FILE] --cache CACHE
    [--out RANKER] [--json FIGURES]``: collect (unless the cache exists), evaluate, and with
    ``--out`` write the ranker fitted on every question."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m graphmem.bench.chunk_ranker",
                                     description=__doc__)
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--cache", type=Path, required=True,
                        help="the candidates (JSON); collected when it does not exist")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--depth", type=int, default=DEPTH)
    parser.add_argument("--kind", action="append", default=None,
                        help="model kinds to cross-validate (logistic, hgb)")
    parser.add_argument("--out", type=Path, default=None, help="write the ranker here")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    if args.cache.exists():
        cached = json.loads(args.cache.read_text(encoding="utf-8"))
    else:
        cached = collect(Settings(), args.data, args.cache, args.limit)
    wanted = {p.stem for p in args.data}
    cached = {**cached, "datasets": {k: v[:args.limit] for k, v in cached["datasets"].items()
                                     if k in wanted}}
    figures = evaluate(cached, tuple(args.kind or ("logistic", "hgb")), args.depth)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.out is not None:
        ranker = train(cached, args.depth, about(figures, [p.name for p in args.data]))
        ranker = ChunkRanker(ranker.lists, ranker.depth, ranker.mean, ranker.scale,
                             ranker.coef, ranker.intercept, ranker.about,
                             Settings().embedder)
        args.out.write_text(json.dumps(ranker.to_json(), indent=2) + "\n", encoding="utf-8")
        _log(f"ranker written to {args.out}")
    return figures


if __name__ == "__main__":
    main()
