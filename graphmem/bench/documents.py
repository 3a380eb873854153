"""Document retrieval benchmark (`graphmem bench documents`): SQuAD-format files of documents and
questions whose gold evidence is a passage.

Each article is ingested as one document, as a user would send it (an article of several
paragraphs: its paragraphs joined by blank lines, its title as the title; an article of one
``context``: that text). A question's gold passage is the newline-delimited paragraph of the
document that holds its answer (found by the answer's text, nearest its stated offset: some
offsets are wrong). A returned chunk hits when it covers at least half of the gold passage, or
the passage covers at least half of the chunk (character offsets, same document).

Scored per method of graphmem's chunk search, and in the same run for two baselines over the same
paragraphs (BM25 with bm25s; dense with the same embedder, exact): passage hit@1/5/10, MRR@10,
answer-in-context at 512/1024/2048 tokens of packed context (`estimate_tokens`, the measure of
``max_tokens``), search latency, ingest throughput (stored, embedded and searchable when the
request returns). Everything is written into a throwaway tenant, deleted at the end.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.bench.units import percentiles
from graphmem.config import Settings
from graphmem.documents.models import ChunkSearch, DocumentIn
from graphmem.documents.service import Documents
from graphmem.embeddings import query_vectors
from graphmem.retrieval.context import estimate_tokens
from graphmem.service import Memory
from graphmem.store import TenantStores

METHODS = ("vector", "fulltext", "rrf", "rrf+rerank")
"""``rrf`` is the fused order; ``+rerank`` re-ranks it with the shipped chunk ranker (the
search's default)."""
DEFAULT_METHOD = "rrf+rerank"
KS = (1, 5, 10)
BUDGETS = (512, 1024, 2048)
SEARCH_K = 20
"""Chunks a search returns: the first 10 are scored, all are offered to packing."""
OWNER = "bench-docs"


@dataclass
class Question:
    id: str
    text: str
    doc: int
    answers: list[str]
    gold: tuple[int, int]


@dataclass
class Dataset:
    name: str
    titles: list[str | None]
    texts: list[str]
    questions: list[Question]
    passages: list[tuple[int, int, int]] = field(default_factory=list)
    """Every newline-delimited paragraph: (document, start, end)."""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load(path: Path) -> Dataset:
    """A SQuAD-format file as documents, questions with their gold passages, and the paragraphs
    the baselines search."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    titles: list[str | None] = []
    texts: list[str] = []
    questions: list[Question] = []
    for d, article in enumerate(data):
        paragraphs = article["paragraphs"]
        several = len(paragraphs) > 1
        titles.append(article.get("title", "").replace("_", " ") or None if several else None)
        text, at = "", []
        for p in paragraphs:
            if text:
                text += "\n\n"
            at.append(len(text))
            text += p["context"]
        texts.append(text)
        for p, base in zip(paragraphs, at, strict=True):
            for qa in p["qas"]:
                answers = [a["text"] for a in qa["answers"] if a["text"].strip()]
                if not answers:
                    continue
                start = _locate(text, answers[0], base + qa["answers"][0]["answer_start"],
                                base, base + len(p["context"]))
                if start is None:
                    continue
                questions.append(Question(qa["id"], qa["question"], d, answers,
                                          _line(text, start)))
    out = Dataset(path.stem, titles, texts, questions)
    for d, text in enumerate(texts):
        out.passages += [(d, m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)
                         if text[m.start():m.end()].strip()]
    return out


def _locate(text: str, answer: str, stated: int, lo: int, hi: int) -> int | None:
    """The occurrence of ``answer`` in ``text[lo:hi]`` nearest ``stated``."""
    found = [m.start() for m in re.finditer(re.escape(answer), text[lo:hi])]
    return lo + min(found, key=lambda s: abs(lo + s - stated)) if found else None


def _line(text: str, at: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return start, len(text) if end < 0 else end


def covers(chunk: tuple[int, int], gold: tuple[int, int]) -> bool:
    """A chunk covers at least half of the gold passage, or the passage at least half of it."""
    overlap = min(chunk[1], gold[1]) - max(chunk[0], gold[0])
    return overlap > 0 and (2 * overlap >= gold[1] - gold[0]
                            or 2 * overlap >= chunk[1] - chunk[0])


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def score(ranked: Sequence[tuple[int, int, int]], texts: Sequence[str],
          q: Question) -> dict[str, Any]:
    """hit@k, reciprocal rank and answer-in-context of one question's ranked spans
    (document, start, end)."""
    rank = next((i + 1 for i, (d, s, e) in enumerate(ranked[:10])
                 if d == q.doc and covers((s, e), q.gold)), None)
    packed: dict[int, bool] = {}
    answers = [_normal(a) for a in q.answers]
    for budget in BUDGETS:
        used, parts = 0, []
        for d, s, e in ranked:
            cost = estimate_tokens(texts[d][s:e])
            if used + cost > budget:
                continue
            used += cost
            parts.append(_normal(texts[d][s:e]))
        joined = "\n".join(parts)
        packed[budget] = any(a in joined for a in answers)
    return {"rank": rank, "packed": packed}


def summary(scores: Sequence[dict[str, Any]], times: Sequence[float]) -> dict[str, Any]:
    n = len(scores) or 1
    return {
        "hit": {str(k): sum(1 for s in scores if s["rank"] and s["rank"] <= k) / n for k in KS},
        "mrr10": sum(1 / s["rank"] for s in scores if s["rank"]) / n,
        "answer_in_context": {str(b): sum(s["packed"][b] for s in scores) / n for b in BUDGETS},
        "latency_ms": percentiles(list(times)) if times else {},
    }


# --- baselines over the same paragraphs ----------------------------------------------------
def bm25(ds: Dataset) -> tuple[Callable[[str], list[tuple[int, int, int]]], float]:
    import bm25s  # type: ignore[import-untyped]

    corpus = [ds.texts[d][s:e] for d, s, e in ds.passages]
    t = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False),
                    show_progress=False)
    built = time.perf_counter() - t

    def search(query: str) -> list[tuple[int, int, int]]:
        docs, _ = retriever.retrieve(bm25s.tokenize([query], stopwords="en",
                                                    show_progress=False),
                                     k=min(SEARCH_K, len(corpus)), show_progress=False)
        return [ds.passages[int(i)] for i in docs[0]]

    return search, built


def dense(ds: Dataset, mem: Memory) -> tuple[Callable[[str], list[tuple[int, int, int]]], float]:
    corpus = [ds.texts[d][s:e] for d, s, e in ds.passages]
    t = time.perf_counter()
    matrix = np.asarray(mem.embedder.embed(corpus), dtype=np.float32)
    built = time.perf_counter() - t

    def search(query: str) -> list[tuple[int, int, int]]:
        v = np.asarray(query_vectors(mem.embedder, [query])[0], dtype=np.float32)
        top = np.argsort(-(matrix @ v))[:SEARCH_K]
        return [ds.passages[int(i)] for i in top]

    return search, built


def _timed(search: Callable[[str], list[tuple[int, int, int]]], ds: Dataset,
           limit: int | None) -> dict[str, Any]:
    scores, times = [], []
    for q in ds.questions[:limit]:
        t = time.perf_counter()
        ranked = search(q.text)
        times.append((time.perf_counter() - t) * 1000)
        scores.append(score(ranked, ds.texts, q))
    return summary(scores, times)


# --- graphmem ------------------------------------------------------------------------------
def ingest(docs: Documents, stores: TenantStores, ds: Dataset) -> tuple[dict[str, Any], list[str]]:
    """Each article as one document; returns the throughput and the versions' ids."""
    ids: list[str] = []
    chunks = 0
    timings: dict[str, float] = {}
    t = time.perf_counter()
    for d, (title, text) in enumerate(zip(ds.titles, ds.texts, strict=True)):
        wrote = docs.ingest(stores, DocumentIn(owner=owner_of(ds.name), key=f"{ds.name}/{d}",
                                               title=title,
                                               content=text), timings=timings)
        ids.append(wrote.id)
        chunks += wrote.chunks
    seconds = time.perf_counter() - t
    chars = sum(len(x) for x in ds.texts)
    return {"documents": len(ds.texts), "chars": chars, "chunks": chunks, "seconds": seconds,
            "chars_per_s": chars / seconds, "chunks_per_s": chunks / seconds,
            **{f"{stage}_s": timings.get(stage, 0.0) / 1000
               for stage in ("parse", "embed", "write")}}, ids


def owner_of(name: str) -> str:
    """Each file's documents are one owner's: a search never meets another file's chunks."""
    return f"{OWNER}-{name}"


def parse_method(method: str) -> tuple[str, float | None, float, float, float]:
    """A method's name as (base method, fulltext weight or None, topic list weight, tree list
    weight, label list weight): ``rrf:W`` is rrf with the fulltext list weighted W; ``+topic``
    adds the topic list (the topic nearest by centroid), ``+label`` the label list (the topic
    whose label best matches the query's words) and ``+tree`` the collapsed-tree list (each
    weighted 1, or ``+topic=W``), e.g. ``rrf+topic+label:4``."""
    name, _, weight = method.partition(":")
    base, *extras = name.split("+")
    lists = {"topic": 0.0, "tree": 0.0, "label": 0.0}
    for extra in extras:
        kind, _, w = extra.partition("=")
        if kind not in lists:
            raise ValueError(f"unknown list {kind!r} in method {method!r} (topic, label, "
                             "tree)")
        lists[kind] = float(w) if w else 1.0
    if base not in METHODS:
        raise ValueError(f"unknown method {base!r} in {method!r} ({', '.join(METHODS)})")
    return (base, float(weight) if weight else None, lists["topic"], lists["tree"],
            lists["label"])


def graphmem_search(docs: Documents, stores: TenantStores, method: str, owner: str,
                    neighbours: int = 0) -> Callable[[str], list[tuple[int, int, int]]]:
    """A method's search (`parse_method`; ``+rerank``: re-ranked, else the fused order)."""
    rerank = "+rerank" in method
    base, weight, topic, tree, label = parse_method(method.replace("+rerank", ""))

    def search(query: str) -> list[tuple[int, int, int]]:
        found = docs.search(stores, ChunkSearch(owner=owner, query=query, k=SEARCH_K,
                                                method=base,  # type: ignore[arg-type]
                                                neighbours=neighbours),
                            fulltext_weight=weight, topic_weight=topic, tree_weight=tree,
                            label_weight=label, rerank=rerank)
        return [(int(c.key.rsplit("/", 1)[1]), c.start, c.end) for c in found.chunks]

    return search


def run_dataset(mem: Memory, docs: Documents, stores: TenantStores, path: Path,
                limit: int | None = None, methods: Sequence[str] = METHODS,
                peer: str | None = None) -> dict[str, Any]:
    ds = load(path)
    _log(f"{ds.name}: {len(ds.texts)} documents, {len(ds.questions)} questions, "
         f"{len(ds.passages)} paragraphs")
    throughput, _ = ingest(docs, stores, ds)
    _log(f"  ingest: {throughput['chars_per_s']:.0f} chars/s, {throughput['chunks']} chunks "
         f"(parse {throughput['parse_s']:.1f} s, embed {throughput['embed_s']:.1f} s, "
         f"write {throughput['write_s']:.1f} s)")
    t = time.perf_counter()
    tree = docs.build_topics(stores, owner_of(ds.name))
    throughput["topics_s"] = time.perf_counter() - t
    throughput["topics"] = tree["topics"]
    _log(f"  topic tree: {tree['topics']} topics in {throughput['topics_s']:.1f} s")
    search = graphmem_search(docs, stores, DEFAULT_METHOD, owner_of(ds.name))
    for q in ds.questions[:20]:  # warm-up: query plans, the model
        search(q.text)
    out: dict[str, Any] = {"documents": len(ds.texts),
                           "questions": len(ds.questions[:limit]), "methods": {},
                           "baselines": {}, "peer": {}, "ingest": throughput}
    for method in methods:
        out["methods"][method] = _timed(graphmem_search(docs, stores, method,
                                                        owner_of(ds.name)), ds, limit)
        _log(f"  {method}: {_brief(out['methods'][method])}")
    for name in ("bm25", "dense"):
        fn, built = bm25(ds) if name == "bm25" else dense(ds, mem)
        out["baselines"][name] = {**_timed(fn, ds, limit), "index_s": built}
        _log(f"  {name}: {_brief(out['baselines'][name])}")
    if peer == "mem0":
        spans = [(d, c.start, c.end) for d, (title, text) in
                 enumerate(zip(ds.titles, ds.texts, strict=True))
                 for c in docs.prepare(DocumentIn(owner=OWNER, key="k", title=title,
                                                  content=text))[1].chunks]
        fn = mem0(ds, spans, mem.settings, mem.embedder.dimensions)
        try:
            out["peer"]["mem0"] = {**_timed(fn, ds, limit), "memories": len(spans)}
        finally:
            fn.close()  # type: ignore[attr-defined]
        _log(f"  mem0: {_brief(out['peer']['mem0'])}")
    return out


def mem0(ds: Dataset, chunks: Sequence[tuple[int, int, int]], settings: Settings,
         dimensions: int) -> Callable[[str], list[tuple[int, int, int]]]:
    """mem0 (`graphmem.bench.peer_mem0.Mem0Peer`: offline, the same MiniLM) holding one memory
    per graphmem chunk (``infer=False``), its span in the metadata. Returns its search."""
    from graphmem.bench.peer_mem0 import Mem0Peer
    from graphmem.embeddings import _resolve

    peer = Mem0Peer(_resolve(settings.embedding_model), dimensions)
    for d, s, e in chunks:
        peer.memory.add([{"role": "user", "content": ds.texts[d][s:e]}], user_id=OWNER,
                        metadata={"span": f"{d}:{s}:{e}"}, infer=False)

    def search(query: str) -> list[tuple[int, int, int]]:
        reply = peer.memory.search(query, top_k=SEARCH_K, filters={"user_id": OWNER})
        spans = [str((r.get("metadata") or {}).get("span", "")) for r in reply.get("results", [])]
        return [(int(a), int(b), int(c)) for a, b, c in
                (x.split(":") for x in spans if x.count(":") == 2)]

    search.close = peer.close  # type: ignore[attr-defined]
    return search


def topic_quality(docs: Documents, stores: TenantStores, path: Path) -> dict[str, Any]:
    """Each paragraph of a SQuAD-format file stored as a separate untitled note; the owner's
    topic tree built once; NMI and ARI of the top-level categories against the source
    articles, the tree's depth and sizes, and the build time."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    from graphmem.documents.topics import shape

    owner = OWNER + "-topics"
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    source: dict[str, int] = {}
    for a, article in enumerate(data):
        for p, paragraph in enumerate(article["paragraphs"]):
            wrote = docs.ingest(stores, DocumentIn(owner=owner, key=f"{a}/{p}",
                                                   content=paragraph["context"]))
            source[wrote.id] = a
    t = time.perf_counter()
    built = docs.build_topics(stores, owner)
    seconds = time.perf_counter() - t
    topics = docs.topics(stores, owner)
    category = {m.id: n for n, tp in enumerate(t for t in topics if t.level == 1)
                for m in docs.topic(stores, tp.id, limit=100_000).members}
    ids = sorted(source)
    truth = [source[i] for i in ids]
    found = [category.get(i, -1) for i in ids]
    return {"dataset": path.stem, "notes": len(ids), "sources": len(data),
            "top_level": sum(1 for tp in topics if tp.level == 1),
            "nmi": float(normalized_mutual_info_score(truth, found)),
            "ari": float(adjusted_rand_score(truth, found)),
            "shape": shape([(tp.level, tp.documents) for tp in topics]),
            "topics": len(topics), "build_s": seconds, "kept_ids": built["kept"],
            "labels": [tp.label for tp in topics if tp.level == 1][:30]}


def _brief(r: dict[str, Any]) -> str:
    return (f"hit@1 {r['hit']['1']:.3f} @5 {r['hit']['5']:.3f} @10 {r['hit']['10']:.3f} "
            f"mrr {r['mrr10']:.3f} aic@1024 {r['answer_in_context']['1024']:.3f} "
            f"p50 {r['latency_ms'].get('p50', 0):.1f} ms")


def run(settings: Settings, data: Sequence[Path], json_out: Path | None,
        limit: int | None = None, headers: bool = True,
        peer: str | None = None, topics: Path | None = None,
        methods: Sequence[str] = METHODS) -> dict[str, Any]:
    """Every file's retrieval figures; with ``topics`` (a SQuAD-format file), the topic tree's
    quality on its paragraphs as notes."""
    mem = Memory.open(settings)
    docs = Documents(settings.model_copy(update={"document_inline_chunks": 10_000}),
                     mem.embedder, mem.search_pool, headers=headers)
    tenant = f"bench-docs-{secrets.token_hex(4)}"
    out: dict[str, Any] = {"default_method": DEFAULT_METHOD, "embedder": mem.embedder.name,
                           "datasets": {}}
    try:
        for path in data:
            out["datasets"][path.stem] = run_dataset(mem, docs, mem.stores(tenant), path, limit,
                                                     methods, peer=peer)
            if json_out is not None:  # after each file: a long run keeps what it measured
                json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        if topics is not None:
            out["topics"] = topic_quality(docs, mem.stores(tenant), topics)
            _log(f"topics: NMI {out['topics']['nmi']:.3f} ARI {out['topics']['ari']:.3f}, "
                 f"{out['topics']['top_level']} categories, build {out['topics']['build_s']:.1f} s")
    finally:
        for owner in [*(owner_of(p.stem) for p in data), OWNER + "-topics"]:
            mem.store.tenant(tenant).delete_owner(owner)
        mem.close()
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


def plot(figures: dict[str, Any], directory: Path) -> list[Path]:
    """One chart per dataset: hit@1/5/10 of every method, baseline and peer side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, ds in figures["datasets"].items():
        rows = {**ds["methods"], **ds["baselines"], **{f"peer {k}": v for k, v in
                                                       ds["peer"].items()}}
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(rows)
        for i, (name, r) in enumerate(rows.items()):
            ax.bar([x + i * width for x in range(len(KS))], [r["hit"][str(k)] for k in KS],
                   width, label=name)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(KS))], [f"hit@{k}" for k in KS])
        ax.set_ylim(0, 1)
        ax.set_title(f"{stem}: passage hit@k")
        ax.legend(fontsize=7)
        path = directory / f"documents-{stem}.png"
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written
