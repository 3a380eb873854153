"""The scale curve (`graphmem bench scale`): how search latency, ingest rate, memory and store size
move as one tenant grows from thousands to a million messages.

Real LoCoMo conversations are ingested first, as they are (their owners are the probes: their
questions are searched at every checkpoint, so recall@10 is checked along the way). Then synthetic
conversations are added through the facade in batches: copies of the real ones, each copy one new
owner (or, ``one_owner``, new sessions of the first real owner), shifted in time, its two speakers
renamed and its turns lightly varied, so no text is an exact duplicate of its source. At each
checkpoint (messages in the tenant) the figures are taken: search p50/p95 in-process (the
default `rrf_expand` and its two recall lists alone, interleaved question by question), recall@10,
the ingest rate of the last chunk, this process's RSS, the Neo4j store size on disk and the memory
settings Neo4j runs with. The generator (`synthetic`, `stream`) is pure. Everything written is
deleted at the end unless ``keep``.

``vectors="reuse"`` (`ReusedVectors`) measures the store without the embedding model's CPU: a
synthetic turn gets the vector of the real turn it was copied from, perturbed by a small
deterministic noise (cosine to it about that of a real copy, embedded), instead of its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.bench.locomo import _log, _revision, _sigterm_exits, probes_of
from graphmem.bench.units import Probe, evidence_recall, percentiles
from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.embeddings import Embedder, WrappedEmbedder, token_counts
from graphmem.errors import GraphMemError
from graphmem.models import MessageIn, Method, SearchRequest
from graphmem.service import Memory

BATCH = 100
SIZES = (10_000, 100_000)
QUESTIONS = 100
WARMUP = 10
BUDGET = 10
METHODS: tuple[Method, ...] = ("rrf_expand", "vector", "fulltext")
SHIFT = timedelta(days=17)
"""Copy c of a conversation starts c x 17 days after its source (owners overlap in time)."""
NAMES = ("Alice", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
         "Keiko", "Lars", "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Samir", "Tove",
         "Umar", "Vera", "Wes", "Xenia", "Yusuf", "Zoe", "Amara", "Boris", "Carmen", "Diego",
         "Esther", "Felix", "Gia", "Hugo", "Ida", "Jamal", "Kira", "Leon", "Mira", "Noah",
         "Oscar", "Priya", "Rafael", "Sofia", "Theo", "Uma", "Viktor", "Wanda", "Yara", "Zane")
PREFIXES = ("", "So, ", "Well, ", "Honestly, ", "Oh, ", "Hey, ", "You know, ")
SWAPS = {"really": "truly", "great": "wonderful", "amazing": "incredible", "love": "adore",
         "happy": "glad", "awesome": "fantastic", "thanks": "thank you", "cool": "neat",
         "nice": "lovely", "big": "large", "hard": "tough", "fun": "enjoyable"}
_WORD = re.compile(r"\b(" + "|".join(SWAPS) + r")\b", re.IGNORECASE)
MEMORY_SETTINGS = ("server.memory.heap.max_size", "server.memory.pagecache.size")


# --- the generator (pure) ---------------------------------------------------------------------
def names_for(copy: int, speakers: Iterable[str]) -> dict[str, str]:
    """Copy ``copy``'s new name for each speaker of its source: a pair of `NAMES` distinct for
    the first 50 x 49 copies (the same speaker never gets the same name twice in a row)."""
    n = len(NAMES)
    first = copy % n
    second = (first + 1 + (copy // n) % (n - 1)) % n
    picks = (NAMES[first], NAMES[second])
    return {s: picks[i % 2] for i, s in enumerate(sorted(speakers))}


def vary(text: str, names: dict[str, str], variant: int) -> str:
    """A light variation of a turn: speakers renamed (in the text too), an opening word by
    ``variant``, and every other round of variants one everyday word swapped for a synonym."""
    if names:  # one pass: a new name that is another speaker's old one is not renamed again
        pattern = r"\b(" + "|".join(re.escape(old) for old in names) + r")\b"
        text = re.sub(pattern, lambda m: names[m.group(1)], text)
    text = PREFIXES[variant % len(PREFIXES)] + text
    if (variant // len(PREFIXES)) % 2 == 1:
        text = _WORD.sub(lambda m: SWAPS[m.group(1).lower()], text, count=1)
    return text


def synthetic(conv: locomo.Conversation, copy: int, owner: str | None = None) -> list[MessageIn]:
    """Copy ``copy`` (>= 1) of a real conversation: owner ``scale-<copy>`` (or ``owner``, whose
    sessions it then adds), ids and sessions prefixed by the copy, shifted by copy x `SHIFT`,
    speakers renamed, texts varied (`vary`)."""
    names = names_for(copy, {m.speaker for m in conv.messages})
    who = owner or f"scale-{copy:06d}"
    tag = f"x{copy:06d}"
    out = []
    for i, m in enumerate(conv.messages):
        out.append(MessageIn(
            id=f"{tag}/{m.id}", owner=who, session_id=f"{tag}/{m.session_id}",
            speaker=names[m.speaker], text=vary(m.text, names, copy * 7 + i) or m.text,
            timestamp=m.timestamp + copy * SHIFT,
        ))
    return out


def stream(convs: Sequence[locomo.Conversation], owner: str | None = None,
           first_copy: int = 1) -> Iterator[MessageIn]:
    """Synthetic messages without end: copy 1 of each conversation in turn, then copy 2, ...
    (one new owner per copy, or all in ``owner``)."""
    sources = [c for c in convs if c.messages]
    if not sources:
        raise ValueError("no conversation with messages to copy")
    copy = first_copy
    while True:
        yield from synthetic(sources[(copy - 1) % len(sources)], copy, owner)
        copy += 1


def batches(messages: Iterator[MessageIn], count: int, size: int = BATCH
            ) -> Iterator[list[MessageIn]]:
    """The next ``count`` messages of ``messages`` in batches of ``size``."""
    left = count
    while left > 0:
        batch = [m for _, m in zip(range(min(size, left)), messages, strict=False)]
        if not batch:
            return
        left -= len(batch)
        yield batch


def select(probes: Sequence[Probe], n: int) -> list[Probe]:
    """``n`` questions spread evenly over ``probes`` (every category and owner kept in step)."""
    if n >= len(probes):
        return list(probes)
    step = len(probes) / n
    return [probes[int(i * step)] for i in range(n)]


VECTORS = ("embed", "reuse")
"""``--vectors``: every text embedded by the model, or synthetic turns reusing their source's."""
_SPEAKER = re.compile(r"^[^:\n]{1,80}: ")
_OPENINGS = sorted((p for p in PREFIXES if p), key=len, reverse=True)
_SYNONYM = re.compile(r"\b(" + "|".join(sorted(SWAPS.values(), key=len, reverse=True)) + r")\b")
_BACK = {v: k for k, v in SWAPS.items()}
NOISE = 0.037
"""Standard deviation of the noise added to each of a reused vector's dimensions: with 384 of
them the cosine to the source vector is about 0.81, the median cosine between a real turn and its
synthetic copy embedded by MiniLM (150 LoCoMo turns; p10 0.64, p90 0.92)."""


@functools.lru_cache(maxsize=8)
def _names_pattern(names: frozenset[str]) -> re.Pattern[str]:
    known = sorted(names | set(NAMES), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in known) + r")\b")


def source_key(text: str, names: Iterable[str]) -> str:
    """What a synthetic unit shares with the real one it was copied from: the text without its
    "speaker: " label and opening word, every speaker name (real or synthetic) blanked, synonyms
    swapped back, lower-cased."""
    body = _SPEAKER.sub("", text, count=1)
    for prefix in _OPENINGS:
        if body.startswith(prefix):
            body = body[len(prefix):]
            break
    names = names if isinstance(names, frozenset) else frozenset(names)
    body = _names_pattern(names).sub("_", body)
    body = _SYNONYM.sub(lambda m: _BACK[m.group(1)], body)
    return body.lower()


class ReusedVectors(WrappedEmbedder):
    """The scale bench's embedder with ``--vectors reuse``: a text whose `source_key` was embedded
    before gets that vector plus Gaussian noise seeded by the text (`NOISE` per dimension, then
    normalised), so near-copies stay near, never identical; any other text is embedded by the
    model (and its vector kept for the copies to come). Thread-safe."""

    def __init__(self, inner: Embedder, names: Iterable[str], noise: float = NOISE) -> None:
        super().__init__(inner)
        self._names = frozenset(names)
        self._noise = noise
        self._seen: dict[str, tuple[str, list[float]]] = {}
        self._lock = threading.Lock()
        self.reused = 0
        self.embedded = 0

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return token_counts(self._inner, texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [source_key(t, self._names) for t in texts]
        with self._lock:
            todo = {k: t for t, k in zip(texts, keys, strict=True) if k not in self._seen}
            if todo:
                made = self._inner.embed(list(todo.values()))
                self._seen.update((k, (t, v)) for (k, t), v in zip(todo.items(), made,
                                                                       strict=True))
                self.embedded += len(todo)
            out = []
            for text, key in zip(texts, keys, strict=True):
                source, vector = self._seen[key]
                if text == source:
                    out.append(vector)
                else:
                    out.append(perturbed(vector, text, self._noise))
                    self.reused += 1
            return out


def perturbed(vector: Sequence[float], text: str, noise: float) -> list[float]:
    """``vector`` plus Gaussian noise seeded by ``text`` (the same text, the same vector),
    normalised."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    v = np.asarray(vector, dtype=np.float64) + np.random.default_rng(seed).normal(
        0.0, noise, len(vector))
    result: list[float] = (v / (np.linalg.norm(v) or 1.0)).tolist()
    return result


# --- measuring --------------------------------------------------------------------------------
def rss_mb() -> float:
    """This process's resident memory (MB), from /proc (Linux) or the peak from getrusage."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def store_mb(settings: Settings) -> float | None:
    """Size on disk of the database's store and transaction logs (MB), for the local instance
    (`graphmem neo4j start`); None for a remote Neo4j."""
    if settings.neo4j_uri is not None:
        return None
    data = settings.neo4j_instance_dir.expanduser() / "data"
    parts = [data / "databases" / settings.neo4j_database,
             data / "transactions" / settings.neo4j_database]
    found = [p for p in parts if p.exists()]
    if not found:
        return None
    return sum(f.stat().st_size for p in found for f in p.rglob("*") if f.is_file()) / 2**20


def neo4j_memory(mem: Memory) -> dict[str, str | None]:
    """Heap and page cache Neo4j runs with (``SHOW SETTINGS``; None where not allowed)."""
    try:
        rows = mem.store.run("queries/server/server_settings", names=list(MEMORY_SETTINGS))
    except GraphMemError:
        rows = []
    found = {r["name"]: r["value"] for r in rows}
    return {"heap": found.get(MEMORY_SETTINGS[0]), "pagecache": found.get(MEMORY_SETTINGS[1])}


def measure_search(mem: Memory, tenant: str, probes: Sequence[Probe],
                   methods: Sequence[Method] = METHODS) -> dict[str, Any]:
    """Each question once per method (interleaved question by question), k=10 and a budget of
    `BUDGET` messages, after `WARMUP` searches: p50/p95 per method, recall@10 per method."""
    tm = mem.for_tenant(tenant)
    for p in probes[:WARMUP]:
        for m in methods:
            tm.search(SearchRequest(query=p.query, owner=p.owner, method=m, max_messages=BUDGET))
    times: dict[str, list[float]] = {m: [] for m in methods}
    recall: dict[str, list[float]] = {m: [] for m in methods}
    for p in probes:
        for m in methods:
            req = SearchRequest(query=p.query, owner=p.owner, method=m, max_messages=BUDGET)
            t0 = time.perf_counter()
            res = tm.search(req)
            times[m].append((time.perf_counter() - t0) * 1000)
            recall[m].append(evidence_recall(p.gold, [h.id for h in res.hits]))
    return {m: {**percentiles(times[m]),
                "recall_at_10": sum(recall[m]) / max(len(recall[m]), 1)} for m in methods}


def ingest(mem: Memory, tenant: str, chunks: Iterator[list[MessageIn]],
           owners: set[str]) -> tuple[int, float]:
    """Ingest batches (embedding the next while Neo4j commits the last); (created, seconds)."""
    created = 0
    t0 = time.perf_counter()

    def noted() -> Iterator[list[MessageIn]]:
        for batch in chunks:
            owners.update(m.owner for m in batch)
            yield batch

    for report in mem.for_tenant(tenant).messages.ingest_many(noted()):
        created += report.created
    return created, time.perf_counter() - t0


# --- the run ----------------------------------------------------------------------------------
def main(
    settings: Settings, data: Path, sizes: Sequence[int] = SIZES, *, one_owner: bool = False,
    questions: int = QUESTIONS, json_out: Path | None = None, keep: bool = False,
    batch: int = BATCH, memory: Memory | None = None, vectors: str = "embed",
) -> dict[str, Any]:
    """Run the curve, print the table, write ``json_out`` after every checkpoint; returns the
    figures. ``sizes``: messages in the tenant at each checkpoint (ascending; the real
    conversations go in whole first, even past the first size). ``memory``: use this one
    (left open) instead of opening one. ``vectors``: ``embed`` (every text by the model) or
    ``reuse`` (`ReusedVectors`)."""
    if vectors not in VECTORS:
        raise ValueError(f"vectors must be one of {VECTORS}, not {vectors!r}")
    sizes = sorted(set(sizes))
    convs = [c for c in locomo.load(data) if c.messages]
    if not convs:
        raise ValueError(f"{data}: no conversation with messages")
    real = convs[:1] if one_owner else convs
    probes = select(probes_of(real)[0], questions)
    tenant = "bench-scale-" + secrets.token_hex(6)
    base = memory or Memory.open(settings)
    reuse = None
    mem = base
    if vectors == "reuse":
        reuse = ReusedVectors(base.embedder, {m.speaker for c in convs for m in c.messages})
        mem = Memory(settings, base.store, reuse)
    owners: set[str] = set()
    out: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(), "git_revision": _revision(),
        "mode": "one_owner" if one_owner else "many_owners", "tenant": tenant,
        "data": str(data.resolve()), "sizes": sizes, "questions": len(probes),
        "batch": batch, "budget": BUDGET, "methods": list(METHODS), "vectors": vectors,
        "settings": {"embedding_model": mem.embedder.name,
                     "neo4j_version": mem.store.server_version,
                     "formation_jobs": settings.formation_jobs},
        "neo4j_memory": neo4j_memory(mem), "checkpoints": [],
    }

    def save() -> None:
        if json_out is not None:
            json_out.write_text(json.dumps(out, indent=2, default=str) + "\n", encoding="utf-8")

    t_start = time.perf_counter()
    with _sigterm_exits():
        try:
            first = [m for c in real for m in c.messages]
            if one_owner:  # every synthetic session goes to the real conversation's owner
                source: Iterator[MessageIn] = stream(convs, owner=real[0].messages[0].owner)
            else:
                source = stream(convs)
            stored = 0
            real_batches = batches(iter(first), len(first), batch)
            for size in sizes:
                want = max(size - stored, 0)
                chunk: Iterator[list[MessageIn]]
                if stored == 0:
                    rest = max(want - len(first), 0)
                    chunk = _chain(real_batches, batches(source, rest, batch))
                else:
                    chunk = batches(source, want, batch)
                _log(f"ingesting up to {size} messages ...")
                created, seconds = ingest(mem, tenant, chunk, owners)
                stored += created
                _log(f"  {created} messages in {seconds:.1f} s; searching ...")
                point = {
                    "messages": stored, "owners": len(owners),
                    "chunk_messages": created, "chunk_seconds": seconds,
                    "ingest_messages_per_s": created / seconds if seconds else 0.0,
                    "search": measure_search(mem, tenant, probes),
                    "rss_mb": rss_mb(), "store_mb": store_mb(settings),
                    "at_s": time.perf_counter() - t_start,
                }
                if reuse is not None:
                    point["vectors_reused"], point["vectors_embedded"] = (reuse.reused,
                                                                          reuse.embedded)
                out["checkpoints"].append(point)
                save()
                _log(line(point))
        finally:
            if not keep:
                _log(f"deleting {len(owners)} owners ...")
                try:
                    for who in sorted(owners):
                        mem.for_tenant(tenant).messages.forget_owner(who)
                finally:
                    if memory is None:
                        base.close()
            elif memory is None:
                base.close()
    out["duration_s"] = time.perf_counter() - t_start
    if rates := [p["ingest_messages_per_s"] for p in out["checkpoints"][-1:]]:
        out["estimate_1m_hours"] = 1_000_000 / rates[0] / 3600 if rates[0] else None
    save()
    print(report(out))
    return out


def _chain(*parts: Iterator[list[MessageIn]]) -> Iterator[list[MessageIn]]:
    for part in parts:
        yield from part


def line(p: dict[str, Any]) -> str:
    s = p["search"]
    store = f"{p['store_mb']:.0f} MB" if p["store_mb"] is not None else "n/a"
    return (f"{p['messages']:>9} msgs {p['owners']:>6} owners | "
            + " | ".join(f"{m} p50 {v['p50']:.1f} p95 {v['p95']:.1f}" for m, v in s.items())
            + f" | recall@10 {s['rrf_expand']['recall_at_10']:.3f} | ingest "
            f"{p['ingest_messages_per_s']:.1f} msg/s | RSS {p['rss_mb']:.0f} MB | store {store}")


def report(out: dict[str, Any]) -> str:
    """The curve as a plain-text table."""
    mem = out["neo4j_memory"]
    lines = [f"Scale curve ({out['mode']}): {out['questions']} LoCoMo questions per checkpoint, "
             f"k=10, budget {out['budget']}; Neo4j heap {mem['heap']}, page cache "
             f"{mem['pagecache']}", *(line(p) for p in out["checkpoints"])]
    if out.get("estimate_1m_hours"):
        lines.append(f"1M messages at the last chunk's rate: ~{out['estimate_1m_hours']:.1f} h")
    return "\n".join(lines)


def plot_curve(out: dict[str, Any], directory: Path) -> list[Path]:
    """``scale.png``: search p50/p95 per method, ingest rate and store size against messages."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "charts need matplotlib: pip install 'graphmem[plot]'", name=exc.name) from exc
    points = out.get("checkpoints") or []
    if not points:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    xs = [p["messages"] for p in points]
    fig = Figure(figsize=(11, 4))
    FigureCanvasAgg(fig)
    lat, rate, size = fig.subplots(1, 3)
    for m in points[0]["search"]:
        for stat, style in (("p50", "-o"), ("p95", "--o")):
            lat.plot(xs, [p["search"][m][stat] for p in points], style, label=f"{m} {stat}")
    lat.set_ylabel("search latency (ms)")
    lat.legend(fontsize="x-small")
    rate.plot(xs, [p["ingest_messages_per_s"] for p in points], "-o")
    rate.set_ylabel("ingest (messages/s, last chunk)")
    rate.set_ylim(bottom=0)
    stores = [p["store_mb"] for p in points]
    if all(s is not None for s in stores):
        size.plot(xs, stores, "-o", label="Neo4j store (MB)")
    size.plot(xs, [p["rss_mb"] for p in points], "-o", label="bench RSS (MB)")
    size.set_ylabel("MB")
    size.legend(fontsize="x-small")
    for ax in (lat, rate, size):
        ax.set_xscale("log")
        ax.set_xlabel("messages in the tenant")
        ax.grid(alpha=0.3)
    fig.suptitle(f"graphmem scale curve ({out.get('mode', '')})")
    fig.tight_layout()
    path = directory / ("scale_one_owner.png" if out.get("mode") == "one_owner" else "scale.png")
    fig.savefig(path, format="png", dpi=110)
    return [path]

