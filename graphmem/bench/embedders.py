"""The embedding models side by side on LoCoMo: evidence recall of ``rrf_expand`` (and ``vector``)
per budget and category, ingest speed and the cost of embedding one query, in one run.

Recall-only quick path: each model ingests the file once into its own throwaway tenant of one
database (all the models give 384 dimensions, so they share the vector indexes; the tenant keeps
their vectors apart); per question the recall lists are read once and every budget is then
selected by the same pure fusion and expansion as `Memory.search` (as `graphmem.bench.ablation`
does). Ingest runs ``passes`` times per model, the models alternating, after a warm-up pass of
the first model (a loaded machine slows them alike); the best pass counts. Everything written
is deleted at the end.

    python -m graphmem.bench.embedders --data ../shared/data/locomo/locomo_dev.json --json OUT
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graphmem.bench.ablation import CachedReads
from graphmem.bench.locomo import BUDGETS, CATEGORIES, ingest_all, probes_of
from graphmem.bench.units import Probe, evidence_recall
from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.embeddings import Embedder, embedder_for, query_vectors
from graphmem.models import Method, SearchRequest
from graphmem.progress import track
from graphmem.retrieval.plan import resolve
from graphmem.retrieval.search import message_lists, select_messages
from graphmem.service import Memory
from graphmem.store import Store

METHODS: tuple[Method, ...] = ("vector", "rrf_expand")
CHOICES = ("minilm", "e5-small-v2", "e5-small-v2+int8", "bge-small-en-v1.5",
           "bge-small-en-v1.5+int8")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load(choice: str, settings: Settings) -> Embedder:
    """``minilm`` is the default model (int8 as configured); the others name a jar model and
    ``+int8`` picks its int8 jar."""
    if choice == "minilm":  # what the server runs with these settings
        return embedder_for(settings.model_copy(update={"embedder": "minilm"}))
    from graphmem.embedders.onnx import MODELS, OnnxEmbedder

    name, _, q = choice.partition("+")
    return OnnxEmbedder.from_maven(MODELS[name], settings.embedding_cache_dir,
                                   quantize=q == "int8", batch_size=settings.embedding_batch_size)


def recall(mem: Memory, tenant: str, probes: Sequence[Probe],
           budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """Recall per method and budget, overall and per category: lists read once per question."""
    rs = mem.recipe()
    got = {m: {b: [0.0] * len(probes) for b in budgets} for m in METHODS}
    for n, p in enumerate(track(probes, "questions")):
        store = CachedReads(mem.store.tenant(tenant))
        now = datetime.now(UTC)
        req = SearchRequest(query=p.query, owner=p.owner, method="rrf_expand",
                            max_messages=max(budgets))
        lists = message_lists(store, mem.embedder, resolve(req, rs, now), sparse=mem.sparse)
        for m in METHODS:
            for b in budgets:
                plan = resolve(req.model_copy(update={"method": m, "max_messages": b}),
                               rs.for_method(m), now)
                selected, records, _ = select_messages(
                    store, {name: lists[name] for name in plan.lists}, plan)
                got[m][b][n] = evidence_recall(p.gold, [s.id for s in selected if s.id in records])
    out: dict[str, Any] = {}
    for m in METHODS:
        out[m] = {
            "recall": {str(b): _mean(got[m][b]) for b in budgets},
            "recall_by_category": {
                str(c): {str(b): _mean([got[m][b][i] for i, p in enumerate(probes)
                                        if p.category == c]) for b in budgets}
                for c in CATEGORIES},
        }
    return out


def query_cost(embedder: Embedder, probes: Sequence[Probe]) -> dict[str, float]:
    """Milliseconds to embed one query alone (what a search pays), over every question."""
    for p in probes[:20]:
        query_vectors(embedder, [p.query])
    times = []
    for p in probes:
        t0 = time.perf_counter()
        query_vectors(embedder, [p.query])
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"p50_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))],
            "mean_ms": statistics.fmean(times)}


def main(settings: Settings, data: Path, json_out: Path | None,
         choices: Sequence[str] = CHOICES, passes: int = 2, warmup: bool = True,
         every: int = 1) -> dict[str, Any]:
    """Run the comparison; ``every``: score every n-th question only (a quicker look)."""
    started = time.perf_counter()
    convs = locomo.load(data)
    probes = probes_of(convs)[0][::every]
    store = Store(settings)
    base = f"bench-emb-{secrets.token_hex(4)}"
    models: dict[str, Embedder] = {}
    out: dict[str, Any] = {"data": str(data), "questions": len(probes), "passes": passes,
                           "models": {}}
    try:
        for c in choices:
            t0 = time.perf_counter()
            models[c] = load(c, settings)
            out["models"][c] = {"name": models[c].name, "load_s": time.perf_counter() - t0,
                                "ingest_messages_per_s": []}
        mems = {c: Memory(settings, store, e) for c, e in models.items()}
        store.apply_schema(models[choices[0]].name, models[choices[0]].dimensions)
        if warmup:  # a Neo4j just started compiles its hot paths on the first writes
            _log("warm-up pass ...")
            _ingest_pass(mems[choices[0]], f"{base}-warm", convs)
        for n in range(passes):
            for c in choices:
                keep = n == passes - 1
                rate = _ingest_pass(mems[c], f"{base}-{_slug(c)}", convs, keep=keep)
                out["models"][c]["ingest_messages_per_s"].append(rate)
                _log(f"pass {n + 1} {c}: {rate:.1f} messages/s")
        for c in choices:
            _log(f"recall {c} ...")
            out["models"][c].update(recall(mems[c], f"{base}-{_slug(c)}", probes))
            out["models"][c]["query_embedding"] = query_cost(models[c], probes)
            _log(json.dumps({c: out["models"][c]["rrf_expand"]["recall"]}))
            if json_out is not None:
                json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    finally:
        if models:
            cleaner = Memory(settings, store, next(iter(models.values())))
            for c in choices:
                for conv in convs:
                    if conv.messages:
                        cleaner.ops(f"{base}-{_slug(c)}").delete_owner(conv.messages[0].owner)
        store.close()
    out["duration_s"] = time.perf_counter() - started
    print(report(out))
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


def _ingest_pass(mem: Memory, tenant: str, convs: Sequence[locomo.Conversation],
                 keep: bool = False) -> float:
    owners: list[str] = []
    try:
        rate = ingest_all(mem, tenant, convs, owners)["messages_per_s"]
    finally:
        if not keep:
            for owner in owners:
                mem.for_tenant(tenant).messages.forget_owner(owner)
    return rate


def _slug(choice: str) -> str:
    return choice.replace("+", "-").replace(".", "")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(out: dict[str, Any]) -> str:
    row: Callable[[dict[str, float]], str] = lambda r: " / ".join(  # noqa: E731
        f"{r[str(b)]:.3f}" for b in BUDGETS)
    lines = [f"LoCoMo {out['questions']} questions; recall @{'/'.join(map(str, BUDGETS))}"]
    for c, m in out["models"].items():
        lines.append(
            f"{c:<24} rrf_expand {row(m['rrf_expand']['recall'])}  vector "
            f"{row(m['vector']['recall'])}  ingest "
            f"{' / '.join(f'{r:.0f}' for r in m['ingest_messages_per_s'])} msg/s  query "
            f"{m['query_embedding']['p50_ms']:.1f} ms p50")
        for cat, label in CATEGORIES.items():
            lines.append(f"    {label:<12} {row(m['rrf_expand']['recall_by_category'][str(cat)])}")
    lines.append(f"Total {out['duration_s']:.0f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--models", default=",".join(CHOICES))
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--no-warmup", action="store_true")
    parser.add_argument("--every", type=int, default=1, help="score every n-th question")
    a = parser.parse_args()
    main(Settings(), a.data, a.json, a.models.split(","), a.passes, not a.no_warmup, a.every)
