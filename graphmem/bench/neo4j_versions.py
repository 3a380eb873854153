"""Neo4j lines side by side (`graphmem bench neo4j-versions`): 5.26 (vector search over-fetched,
filtered after the index, exact scan when that runs dry) against 2026.x (Cypher 25 SEARCH, tenant
and owner filtered inside the index).

One throwaway server of each version, started here and wiped at the end. The first
``conversations`` of the LoCoMo file are ingested into both, as their owners, in a small tenant;
their questions are searched question by question with the servers interleaved (alternating which
goes first), and scored as recall@10 (the share of gold evidence among the first 10 messages,
``max_messages=10``) with the one-shot search latency. Then a large tenant is built: the same
owners plus ``extra`` messages of the other conversations re-owned by many other owners (each
copy's vectors moved a little, so copies are neighbours, not duplicates); the questions are asked
there, and again in the small tenant, which now shares its indexes with the large one. Texts are
embedded once for both servers.
"""

from __future__ import annotations

import json
import math
import secrets
import socket
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.bench.locomo import BATCH, probes_of
from graphmem.bench.units import Probe, evidence_recall, percentiles
from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.embeddings import (
    Embedder,
    WrappedEmbedder,
    embedder_for,
    query_vectors,
    token_counts,
)
from graphmem.messages.ingest import Ingestor
from graphmem.models import MessageIn, Method, SearchRequest
from graphmem.servers import neo4j_server
from graphmem.service import Memory
from graphmem.store.core import Store

VERSIONS = ("5.26.30", "2026.08.1")
METHODS: tuple[Method, ...] = ("vector", "rrf_expand")
BUDGET = 10
WARMUP = 20
NOISE = 0.02
"""Per-dimension noise on the vectors of the re-owned copies (cosine to the original ~0.9)."""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class SharedVectors(WrappedEmbedder):
    """An embedder that embeds each distinct text once (both servers get the same vectors).
    With ``copy`` set, it moves each vector a little, deterministically per text and copy."""

    def __init__(self, embedder: Embedder, memo: dict[str, list[float]] | None = None) -> None:
        super().__init__(embedder)
        self._memo = memo if memo is not None else {}
        self.copy: int | None = None

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return token_counts(self._inner, texts)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return query_vectors(self._inner, texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            self._memo.update(zip(missing, self._inner.embed(missing), strict=True))
        return [self._moved(t) for t in texts]

    def twin(self) -> SharedVectors:
        """Another view on the same memo (its own ``copy``)."""
        return SharedVectors(self._inner, self._memo)

    def _moved(self, text: str) -> list[float]:
        vector = self._memo[text]
        if self.copy is None:
            return vector
        rng = np.random.default_rng(zlib.crc32(text.encode()) * 1_000_003 + self.copy)
        moved = np.asarray(vector) + rng.normal(0.0, NOISE, len(vector))
        return [float(x) for x in moved / np.linalg.norm(moved)]


@dataclass
class Side:
    version: str
    settings: Settings
    memory: Memory
    ingest: dict[str, dict[str, float]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(version: str, base: Settings, embedder: SharedVectors) -> Side:
    home = Path(tempfile.mkdtemp(prefix=f"graphmem-bench-neo4j-{version}-"))
    settings = base.model_copy(update={
        "neo4j_version": version, "neo4j_instance_dir": home, "neo4j_password": None,
        "neo4j_bolt_port": _free_port(), "neo4j_http_port": _free_port(), "neo4j_uri": None,
        "neo4j_heap": "1g", "neo4j_pagecache": "1g", "neo4j_auth": True,
    })
    t0 = time.perf_counter()
    neo4j_server.start(settings)
    store = Store(settings)
    store.apply_schema(embedder.name, embedder.dimensions)
    _log(f"Neo4j {store.server_version} up in {time.perf_counter() - t0:.0f} s "
         f"(filters in the index: {store.vector_filters})")
    return Side(version, settings, Memory(settings, store, embedder), {})


def reowned(convs: Sequence[locomo.Conversation], total: int
            ) -> list[tuple[int | None, list[MessageIn]]]:
    """``total`` messages of ``convs``, copy after copy, each copy under other owners, ids and
    sessions: [(copy number, its messages)]."""
    pool = [m for c in convs for m in c.messages]
    groups: list[tuple[int | None, list[MessageIn]]] = []
    for copy in range(math.ceil(total / len(pool)) if pool else 0):
        tag = f"x{copy}"
        groups.append((copy, [m.model_copy(update={
            "id": f"{tag}/{m.id}", "owner": f"{tag}-{m.owner}",
            "session_id": f"{tag}/{m.session_id}"})
            for m in pool[: total - copy * len(pool)]]))
    return groups


def ingest(side: Side, tenant: str, groups: Sequence[tuple[int | None, list[MessageIn]]],
           embedder: SharedVectors) -> dict[str, float]:
    """Each group (copy number or None, its messages) in batches of `BATCH`; a copy's vectors
    move (`SharedVectors`)."""
    store = side.memory.store.tenant(tenant)
    ingestor = Ingestor(side.settings, embedder)
    t0, total = time.perf_counter(), 0
    for copy, messages in groups:
        embedder.copy = copy
        for i in range(0, len(messages), BATCH):
            ingestor.write(store, ingestor.embed(store, messages[i : i + BATCH]))
        total += len(messages)
    embedder.copy = None
    seconds = time.perf_counter() - t0
    return {"messages": total, "seconds": seconds, "messages_per_s": total / seconds}


def measure(sides: Sequence[Side], tenant: str, probes: Sequence[Probe]) -> dict[str, Any]:
    """Each question once per (server, method), servers interleaved, alternating which goes
    first; recall@10 and latency per server and method."""
    def ask(side: Side, p: Probe, method: Method) -> tuple[float, float]:
        req = SearchRequest(query=p.query, owner=p.owner, method=method, max_messages=BUDGET)
        t0 = time.perf_counter()
        res = side.memory.for_tenant(tenant).search(req)
        ms = (time.perf_counter() - t0) * 1000
        return ms, evidence_recall(p.gold, [h.id for h in res.hits])

    for p in probes[:WARMUP]:
        for side in sides:
            for m in METHODS:
                ask(side, p, m)
    times: dict[tuple[str, str], list[float]] = {(s.version, m): [] for s in sides for m in METHODS}
    recall: dict[tuple[str, str], list[float]] = {k: [] for k in times}
    for n, p in enumerate(probes):
        for side in sides if n % 2 == 0 else list(reversed(sides)):
            for m in METHODS:
                ms, r = ask(side, p, m)
                times[side.version, m].append(ms)
                recall[side.version, m].append(r)
    return {s.version: {m: {"recall@10": float(np.mean(recall[s.version, m])),
                            "latency_ms": percentiles(times[s.version, m])} for m in METHODS}
            for s in sides}


def report(out: dict[str, Any]) -> str:
    lines = [f"Neo4j lines side by side: {out['questions']} questions, owners "
             f"{', '.join(out['owners'])}; large tenant: +{out['extra']} messages of "
             f"{out['extra_owners']} other owners"]
    lines.append(f"  {'scenario':<20}{'version':<12}{'method':<12}"
                 f"{'recall@10':>10}{'p50 ms':>9}{'p95 ms':>9}")
    for scenario, figures in out["scenarios"].items():
        for version, by_method in figures.items():
            for method, f in by_method.items():
                lines.append(f"  {scenario:<20}{version:<12}{method:<12}{f['recall@10']:>10.3f}"
                             f"{f['latency_ms']['p50']:>9.1f}{f['latency_ms']['p95']:>9.1f}")
    for version, ing in out["ingest"].items():
        lines.append(f"  ingest {version}: " + ", ".join(
            f"{k} {v['messages_per_s']:.0f} msg/s" for k, v in ing.items()))
    return "\n".join(lines)


def main(settings: Settings, data: Path, json_out: Path | None, conversations: int = 2,
         questions: int | None = None, extra: int = 30_000,
         versions: Sequence[str] = VERSIONS) -> dict[str, Any]:
    convs = locomo.load(data)
    mine, others = convs[:conversations], convs[conversations:]
    if not mine or (extra and not others):
        raise ValueError(f"{data} has {len(convs)} conversations: keep some for the extras")
    probes = probes_of(mine)[0][:questions]
    embedder = SharedVectors(embedder_for(settings))
    small, large = "bench-small-" + secrets.token_hex(4), "bench-large-" + secrets.token_hex(4)
    extras = reowned(others, extra)
    out: dict[str, Any] = {
        "command": " ".join(sys.argv), "versions": list(versions),
        "owners": [c.messages[0].owner for c in mine], "questions": len(probes),
        "extra": sum(len(g) for _, g in extras),
        "extra_owners": len({m.owner for _, g in extras for m in g}),
        "scenarios": {}, "ingest": {},
    }
    sides: list[Side] = []

    def save() -> None:  # what is measured so far survives an interruption
        out["ingest"] = {s.version: s.ingest for s in sides}
        if json_out is not None:
            json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")

    try:
        for version in versions:
            sides.append(start(version, settings, embedder))
        own: list[tuple[int | None, list[MessageIn]]] = [(None, [m for c in mine
                                                                 for m in c.messages])]
        for side in sides:
            side.ingest["small"] = ingest(side, small, own, embedder)
        out["scenarios"]["small"] = measure(sides, small, probes)
        save()
        _log(report(out))
        twin = embedder.twin()
        for side in sides:
            side.ingest["large_own"] = ingest(side, large, own, embedder)
            side.ingest["large_extra"] = ingest(side, large, extras, twin)
            _log(f"  large tenant on {side.version}: {side.ingest}")
            side.memory.store.await_online(600.0)
        out["scenarios"]["large"] = measure(sides, large, probes)
        save()
        out["scenarios"]["small_beside_large"] = measure(sides, small, probes)
        save()
    finally:
        for side in sides:
            side.memory.close()
            neo4j_server.wipe(side.settings)
    print(report(out))
    return out

