"""An ablation of the chunk re-ranking: does the query's best match among a chunk's sentences
add to the ranker's features? On a candidate cache of `graphmem.bench.chunk_ranker`, each
candidate gains two features (its best sentence similarity to the query, and that minus the best
of any candidate), and the pooled, grouped cross-validation is run with and without them, on the
same folds.

Sentence vectors come one of two ways: ``separate`` embeds every sentence on its own (a pass per
sentence: what storing them would cost at ingest), ``late`` pools each sentence's word pieces
out of the chunk's own pass (`OnnxEmbedder.span_vectors`: no pass of its own). The chunk's text
is read without its title and section path, and sentences are cut as chunking cuts them
(`graphmem.documents.chunk.sentence_spans`).

``python -m graphmem.bench.chunk_sentences --cache CACHE [--how late|separate] [--json OUT]``
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from graphmem.bench.chunk_ranker import Question, brief, cv_figures, grouped_cv, questions_of
from graphmem.config import Settings
from graphmem.documents.chunk import sentence_spans
from graphmem.embeddings import Embedder, embedder_for, query_vectors

How = Literal["late", "separate"]


def sentences(text: str) -> list[tuple[int, int]]:
    """A chunk's sentences as spans; the whole text when it has none."""
    return sentence_spans(text, 0, len(text)) or [(0, len(text))]


def sentence_vectors(embedder: Embedder, texts: Mapping[str, str],
                     how: How) -> dict[str, np.ndarray]:
    """Per chunk id, the unit vectors of its sentences (a row each)."""
    out: dict[str, np.ndarray] = {}
    if how == "late":
        spans_of = getattr(embedder, "span_vectors", None)
        if not callable(spans_of):
            raise SystemExit(f"{embedder.name} cannot pool spans of one pass: use --how separate")
        for id_, text in texts.items():
            got = [v for v in spans_of(text, sentences(text)) if v is not None]
            out[id_] = np.asarray(got or embedder.embed([text]), dtype=np.float32)
        return out
    parts = {id_: [text[s:e] for s, e in sentences(text)] for id_, text in texts.items()}
    every = sorted({p for ps in parts.values() for p in ps})
    vectors = dict(zip(every, embedder.embed(every), strict=True))
    return {id_: np.asarray([vectors[p] for p in ps], dtype=np.float32)
            for id_, ps in parts.items()}


def with_sentences(qs: Sequence[Question], queries: Sequence[Sequence[float]],
                   vectors: Mapping[str, np.ndarray]) -> list[Question]:
    """The questions with two more features per scored candidate: its best sentence similarity
    to the query, and that minus the best candidate's."""
    out = []
    for q, query in zip(qs, queries, strict=True):
        best = [float((vectors[r.id] @ np.asarray(query, dtype=np.float32)).max())
                for r in q.candidates[:len(q.rows)]]
        top = max(best, default=0.0)
        out.append(dataclasses.replace(
            q, rows=[[*row, b, b - top] for row, b in zip(q.rows, best, strict=True)]))
    return out


def ablation(cached: Mapping[str, Any], embedder: Embedder, how: How) -> dict[str, Any]:
    """Pooled, grouped cross-validation of the logistic ranker without and with the sentence
    features, per dataset."""
    per_file = questions_of(cached)
    qs = [q for v in per_file.values() for q in v]
    texts = {r.id: r.text for q in qs for r in q.candidates[:len(q.rows)]}
    vectors = sentence_vectors(embedder, texts, how)
    queries = query_vectors(embedder, [q.query for q in qs])
    out: dict[str, Any] = {"how": how, "embedder": embedder.name, "datasets": {}}
    for label, chosen in (("without", qs), ("with", with_sentences(qs, queries, vectors))):
        scores = grouped_cv(chosen, "logistic")
        for name in per_file:
            figures = cv_figures(chosen, scores, name)
            out["datasets"].setdefault(name, {})[label] = figures
            print(f"{name}: {label} sentence features {brief(figures)}", file=sys.stderr)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m graphmem.bench.chunk_sentences",
                                     description=__doc__)
    parser.add_argument("--cache", type=Path, required=True,
                        help="a candidate cache written by graphmem.bench.chunk_ranker")
    parser.add_argument("--how", choices=("late", "separate"), default="late")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    cached = json.loads(args.cache.read_text(encoding="utf-8"))
    embedder = embedder_for(Settings())
    if cached.get("embedder") != embedder.name:
        raise SystemExit(f"the cache holds {cached.get('embedder')}'s candidates, the settings "
                         f"choose {embedder.name}: set GRAPHMEM_EMBEDDER as when it was made")
    figures = ablation(cached, embedder, args.how)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return figures


if __name__ == "__main__":
    main()
