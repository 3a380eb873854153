"""mem0 as a peer in the LoCoMo benchmark (`graphmem bench locomo --peer mem0`): the same
messages, the same questions and the same MiniLM model, in the same run, side by side.

mem0 runs in-process and offline: its ``huggingface`` embedder loads the local MiniLM folder
graphmem uses, qdrant runs in local ``path`` mode in a temporary folder, messages are added with
``infer=False`` (stored as they are, no LLM; the LLM mem0 insists on is a dummy that is never
called), telemetry is off. Its BM25 hybrid runs when fastembed finds the ``Qdrant/bm25`` files in
its local cache; otherwise mem0 searches dense only, and the figures say so. While the peer is
open, every outgoing connection other than to Neo4j is refused and counted (reported as
``network_calls``: offline means zero).

Each stored memory keeps its LoCoMo message id in its metadata, so recall is scored exactly as
graphmem's: the share of a question's gold dia_ids among the returned messages. This module owns
the peer (`Mem0Peer`), the interleaved run (`run`) and the side-by-side table (`comparison`,
`table`); mem0ai is imported only when the peer opens.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.bench.units import Probe, evidence_recall, percentiles
from graphmem.datasets import locomo
from graphmem.models import MessageIn

INSTALL = "pip install 'graphmem[peer]'"
PEERS = ("mem0",)
BUDGETS = (5, 10, 20, 50)
LATENCY_K = 10
WARMUP = 20
BM25_MODEL = "Qdrant/bm25"
GraphmemSearch = Callable[[Probe], object]
"""One graphmem search for a question (timed by `run`, its result unused)."""


class PeerUnavailable(RuntimeError):
    """The peer cannot run here: mem0ai is not installed, or graphmem is not on MiniLM."""


def require(embedder: str = "minilm") -> None:
    """Fail in one line, before a long run, when mem0ai is missing or graphmem's embedder is
    not the MiniLM model mem0 is given."""
    if importlib.util.find_spec("mem0") is None:
        raise PeerUnavailable(f"--peer mem0 needs mem0ai: {INSTALL}")
    if embedder != "minilm":
        raise PeerUnavailable(f"--peer compares on the same MiniLM model: set "
                              f"GRAPHMEM_EMBEDDER=minilm (not {embedder!r})")


# --- pure parts --------------------------------------------------------------------------------
def message_ids(results: dict[str, Any]) -> list[str]:
    """The LoCoMo message ids of a mem0 ``search`` reply, in its order (memories without one,
    which the peer never writes, are dropped)."""
    ids: list[str] = []
    for r in results.get("results", []):
        mid = (r.get("metadata") or {}).get("message_id")
        if isinstance(mid, str) and mid:
            ids.append(mid)
    return ids


def recall_at(gold: Sequence[str], ranked_ids: Sequence[str],
              budgets: Sequence[int] = BUDGETS) -> dict[int, float]:
    """Evidence recall of the first b ranked messages, per budget b (graphmem's scorer)."""
    return {b: evidence_recall(gold, list(ranked_ids[:b])) for b in budgets}


def ratio(graphmem: float, peer: float) -> float | None:
    """graphmem / peer, or None when the peer's figure is 0."""
    return graphmem / peer if peer else None


def comparison(graphmem: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any]:
    """Side by side with ratios (graphmem / peer). Both sides hold ``recall`` (budget as a
    string -> share), ``latency_ms`` (``p50``, ``p95``) and ``ingest_messages_per_s``."""
    rows: dict[str, Any] = {}
    for b in BUDGETS:
        g, p = graphmem["recall"][str(b)], peer["recall"][str(b)]
        rows[f"recall@{b}"] = {"graphmem": g, "peer": p, "ratio": ratio(g, p)}
    for q in ("p50", "p95"):
        g, p = graphmem["latency_ms"][q], peer["latency_ms"][q]
        rows[f"search_{q}_ms"] = {"graphmem": g, "peer": p, "ratio": ratio(g, p)}
    g, p = graphmem["ingest_messages_per_s"], peer["ingest_messages_per_s"]
    rows["ingest_messages_per_s"] = {"graphmem": g, "peer": p, "ratio": ratio(g, p)}
    return rows


def table(name: str, rows: dict[str, Any], notes: Sequence[str] = ()) -> str:
    """The comparison as plain text: one line per figure."""
    lines = [f"graphmem vs {name}, same run, same messages, questions and model",
             f"  {'':<24}{'graphmem':>10}{name:>10}{'ratio':>8}"]
    for label, r in rows.items():
        shown = f"{r['ratio']:8.2f}" if r["ratio"] is not None else f"{'-':>8}"
        fmt = "{:10.3f}" if label.startswith("recall") else "{:10.1f}"
        lines.append(f"  {label:<24}" + fmt.format(r["graphmem"]) + fmt.format(r["peer"])
                     + shown)
    lines += [f"  {n}" for n in notes]
    return "\n".join(lines)


# --- the peer ----------------------------------------------------------------------------------
class _Guard:
    """Refuses and counts outgoing connections, except to the allowed (host, port) pairs."""

    def __init__(self, allowed: set[tuple[str, int]]) -> None:
        self.allowed = allowed
        self.refused: list[str] = []
        self._lock = threading.Lock()

    @contextmanager
    def active(self) -> Iterator[None]:
        original = socket.socket.connect
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                host, port = address[0], address[1]
                if (host, port) not in guard.allowed and (_ip(host), port) not in guard.allowed:
                    with guard._lock:
                        guard.refused.append(f"{host}:{port}")
                    raise ConnectionRefusedError(f"the offline peer may not connect to "
                                                 f"{host}:{port}")
            original(sock, address)

        socket.socket.connect = connect  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            socket.socket.connect = original  # type: ignore[method-assign]


def _ip(host: str) -> str:
    try:
        return socket.gethostbyname(host)
    except OSError:
        return host


def bm25_available() -> bool:
    """Whether fastembed can load the BM25 files from its local cache (never downloads)."""
    try:
        from fastembed import SparseTextEmbedding
    except ImportError:
        return False
    from loguru import logger

    logger.disable("fastembed")  # its "could not find the model" lines: we report it once
    try:
        SparseTextEmbedding(model_name=BM25_MODEL, local_files_only=True)
    except Exception:
        return False
    finally:
        logger.enable("fastembed")
    return True


class Mem0Peer:
    """One in-process mem0 Memory in a temporary folder (removed by `close`)."""

    def __init__(self, model_path: str, dimensions: int) -> None:
        require()
        self.folder = Path(tempfile.mkdtemp(prefix="graphmem-peer-mem0-"))
        os.environ.setdefault("MEM0_TELEMETRY", "False")  # read when mem0 is first imported
        os.environ.setdefault("MEM0_DIR", str(self.folder / "home"))
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.bm25 = bm25_available()
        self.spacy = importlib.util.find_spec("spacy") is not None
        # a line per stored memory, and warnings the figures' notes already give
        logging.getLogger("mem0").setLevel(logging.ERROR)
        if not self.bm25:
            from loguru import logger

            logger.disable("fastembed")  # mem0 tries the BM25 files again: said once, in notes
        mem0 = importlib.import_module("mem0")  # untyped: imported by name

        self.version = importlib.metadata.version("mem0ai")
        self.memory: Any = mem0.Memory.from_config({
            "embedder": {"provider": "huggingface",
                         "config": {"model": model_path, "embedding_dims": dimensions,
                                    "model_kwargs": {"device": "cpu"}}},
            "vector_store": {"provider": "qdrant",
                             "config": {"path": str(self.folder / "qdrant"),
                                        "collection_name": "locomo",
                                        "embedding_model_dims": dimensions, "on_disk": False}},
            # never called (infer=False, no rerank): mem0 wants one configured anyway
            "llm": {"provider": "openai",
                    "config": {"model": "unused", "api_key": "unused",
                               "openai_base_url": "http://127.0.0.1:9/v1"}},
            "history_db_path": str(self.folder / "history.db"),
        })

    def add(self, messages: Sequence[MessageIn]) -> None:
        """Store each message as one raw memory of its owner, its id in the metadata."""
        for m in messages:
            self.memory.add([{"role": "user", "content": f"{m.speaker}: {m.text}",
                              "name": m.speaker}], user_id=m.owner,
                            metadata={"message_id": m.id}, infer=False)

    def search(self, query: str, owner: str, k: int) -> list[str]:
        """The message ids of the top k memories of the owner."""
        reply = self.memory.search(query, top_k=k, filters={"user_id": owner})
        return message_ids(reply)

    def close(self) -> None:
        try:
            close = getattr(self.memory.vector_store.client, "close", None)
            if callable(close):
                close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def run(
    convs: Sequence[locomo.Conversation], probes: Sequence[Probe], model_path: str,
    dimensions: int, graphmem_search: GraphmemSearch, allowed: set[tuple[str, int]],
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Ingest every conversation into mem0, score its recall at each budget (one search of the
    largest budget per question: mem0 ranks by score, so a smaller budget is a prefix), then time
    its search and graphmem's (``graphmem_search``) question by question, alternating which goes
    first, after a warm-up of both."""
    guard = _Guard(allowed)
    with guard.active():
        peer = Mem0Peer(model_path, dimensions)
        try:
            start = time.perf_counter()
            total = 0
            for c in convs:
                _check(stop)
                peer.add(c.messages)
                total += len(c.messages)
            seconds = time.perf_counter() - start
            recall = {b: [0.0] * len(probes) for b in BUDGETS}
            for n, p in enumerate(probes):
                _check(stop)
                for b, value in recall_at(p.gold, peer.search(p.query, p.owner, max(BUDGETS))
                                          ).items():
                    recall[b][n] = value
            for p in probes[:WARMUP]:
                graphmem_search(p)
                peer.search(p.query, p.owner, LATENCY_K)
            times: dict[str, list[float]] = {"graphmem": [], "peer": []}
            for n, p in enumerate(probes):
                _check(stop)
                order = ("graphmem", "peer") if n % 2 == 0 else ("peer", "graphmem")
                for who in order:
                    t0 = time.perf_counter()
                    if who == "graphmem":
                        graphmem_search(p)
                    else:
                        peer.search(p.query, p.owner, LATENCY_K)
                    times[who].append((time.perf_counter() - t0) * 1000)
        finally:
            peer.close()
    mean = {str(b): float(np.mean(v)) if v else 0.0 for b, v in recall.items()}
    return {
        "peer": "mem0", "version": peer.version,
        "search": "hybrid (dense + BM25)" if peer.bm25 else "dense only",
        "bm25": peer.bm25, "spacy": peer.spacy, "threshold": 0.1,
        "memory_text": "speaker: text, one per message",
        "recall": mean,
        "ingest": {"messages": total, "seconds": seconds,
                   "messages_per_s": total / seconds if seconds else 0.0},
        "latency_ms": {"peer": percentiles(times["peer"]),
                       "graphmem": percentiles(times["graphmem"]), "k": LATENCY_K},
        "network_calls": len(guard.refused), "network_refused": sorted(set(guard.refused)),
    }


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise RuntimeError("stopped")


def notes(result: dict[str, Any]) -> list[str]:
    """What a reader must know to read the ratios."""
    out = [f"mem0 {result['version']} in-process: {result['search']}, qdrant local, "
           f"infer=False, {result['memory_text']}; latency k={result['latency_ms']['k']} "
           "interleaved per question with graphmem's in-process search"]
    if not result["bm25"]:
        out.append(f"mem0's BM25 is off: fastembed found no {BM25_MODEL} files in its local "
                   "cache (FASTEMBED_CACHE_PATH); run once online to seed it")
    if not result.get("spacy", True):
        out.append("no spaCy (mem0ai[nlp]): mem0 matches BM25 on unlemmatized words and gives "
                   "no entity boosts")
    out.append(f"network calls refused during the peer: {result['network_calls']}")
    return out
