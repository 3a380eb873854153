"""LoCoMo evidence-recall benchmark: fulltext / vector / rrf / rrf_expand / rrf_windows / graph
side by side, and the ablation of rrf_windows' lists (`graphmem.bench.ablation`).

Every conversation of the file is ingested as one owner of a throwaway tenant; every question of
categories 1-4 with valid gold evidence is searched once per (method, message budget) and scored
as LoCoMo's ``recall_acc``: the share of its gold evidence dia_ids among the returned messages.
Also measured: ingest throughput (warm-up passes come first, each deleted after it, reported
too: the first is ``cold``; the measured pass follows), search latency in-process and over
HTTP, and the unit study of `graphmem.bench.units`. Everything written is deleted at the end,
even on error.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import numpy as np

from graphmem.bench.ablation import ablation
from graphmem.bench.formation import form_all, score_episodes, temporal_in_context
from graphmem.bench.units import KINDS, Probe, evidence_recall, percentiles, unit_study
from graphmem.config import Settings, hash_api_key
from graphmem.datasets import locomo
from graphmem.models import Method, SearchRequest
from graphmem.progress import track
from graphmem.retrieval import Recipe
from graphmem.service import Memory

METHODS: tuple[Method, ...] = ("fulltext", "vector", "rrf", "rrf_expand", "graph", "iterative")
FORMED_METHODS: tuple[Method, ...] = ("rrf_windows",)
"""Methods scored after formation (they search the turn windows formation builds)."""
SPARSE_METHODS: tuple[Method, ...] = ("rrf_expand", "graph", "iterative")
"""With a sparse model, these methods are scored again without its list (``without_sparse``)."""
BUDGETS = (5, 10, 20, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
BATCH = 100
WARMUP_PASSES = 2
WARMUP = 20
T = TypeVar("T")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def gold_evidence(evidence: Sequence[str], valid: set[str]) -> tuple[str, ...]:
    """Clean gold dia_ids: split entries like ``"D8:6; D9:17"``, drop ids that are not messages
    of the conversation (``"D"``, ``"D:11:26"``, missing turns), drop repeats."""
    parts = (p.strip() for e in evidence for p in e.split(";"))
    return tuple(dict.fromkeys(p for p in parts if p in valid))


def probes_of(convs: Sequence[locomo.Conversation]) -> tuple[list[Probe], dict[str, int]]:
    """The questions to score, and what was left out (category 5, no valid evidence)."""
    probes: list[Probe] = []
    skipped = {"category_5": 0, "no_valid_evidence": 0, "evidence_ids_dropped": 0}
    for c in convs:
        valid = {locomo.dia_id(m.id) for m in c.messages if m.id}
        for q in c.questions:
            if q.category not in CATEGORIES:
                skipped["category_5"] += 1
                continue
            gold = gold_evidence(q.evidence, valid)
            raw = sum(len([p for p in e.split(";") if p.strip()]) for e in q.evidence)
            skipped["evidence_ids_dropped"] += raw - len(gold)
            if not gold:
                skipped["no_valid_evidence"] += 1
                continue
            probes.append(Probe(c.messages[0].owner, q.question, q.category, gold))
    return probes, skipped


def ingest_all(
    mem: Memory, tenant: str, convs: Sequence[locomo.Conversation], owners: list[str]
) -> dict[str, float]:
    """Ingest every conversation in batches of `BATCH`; ``owners`` collects what was written."""
    total = 0
    start = time.perf_counter()
    for c in track(convs, "ingesting conversations"):
        if not c.messages:
            continue
        owners.append(c.messages[0].owner)
        batches = [c.messages[i : i + BATCH] for i in range(0, len(c.messages), BATCH)]
        # the bulk path: embed while Neo4j commits
        for _ in mem.for_tenant(tenant).messages.ingest_many(batches):
            pass
        total += len(c.messages)
        _log(f"  ingested {c.sample_id}: {len(c.messages)} messages")
    seconds = time.perf_counter() - start
    return {"messages": total, "seconds": seconds, "messages_per_s": total / seconds}


def warm_up(
    mem: Memory, tenant: str, convs: Sequence[locomo.Conversation], passes: int = WARMUP_PASSES
) -> list[dict[str, float]]:
    """Ingest passes into a scratch tenant, each deleted after it: a JVM server just started
    runs its first writes slower (on 2 cores, Neo4j spent 26 s of CPU on the first pass of the
    dev file, 13 s on the second, 5-7 s from the third on: JIT compilation)."""
    scratch, runs = f"{tenant}-warmup", []
    for _ in range(passes):
        owners: list[str] = []
        try:
            runs.append(ingest_all(mem, scratch, convs, owners))
        finally:
            for owner in owners:
                mem.for_tenant(scratch).messages.forget_owner(owner)
    return runs


def score(
    mem: Memory, tenant: str, probes: Sequence[Probe], rs: Recipe,
    stop: threading.Event | None = None, methods: Sequence[Method] = METHODS,
) -> dict[str, Any]:
    """One search per (question, method, budget); mean recall overall and per category, and the
    mean context tokens."""
    recall = {m: {b: [0.0] * len(probes) for b in BUDGETS} for m in methods}
    tokens = {m: {b: 0 for b in BUDGETS} for m in methods}
    times: dict[str, list[float]] = {m: [] for m in methods}
    rounds: dict[str, list[int]] = {m: [] for m in methods}
    for n, p in enumerate(track(probes, f"questions ({', '.join(methods)})")):
        _check(stop)
        for m in methods:
            for b in BUDGETS:
                req = SearchRequest(query=p.query, owner=p.owner, method=m, max_messages=b,
                                    trace=m == "iterative")
                t0 = time.perf_counter()
                res = mem.for_tenant(tenant).search(req, rs.for_method(m))
                times[m].append((time.perf_counter() - t0) * 1000)
                if res.trace is not None:
                    rounds[m].append(len(res.trace.rounds))
                recall[m][b][n] = evidence_recall(p.gold, [h.id for h in res.hits])
                tokens[m][b] += res.context_tokens
        if (n + 1) % 100 == 0:
            _log(f"  scored {n + 1}/{len(probes)} questions")
    out: dict[str, Any] = {}
    count = max(len(probes), 1)
    for m in methods:
        by_cat: dict[str, dict[str, float]] = {}
        for cat in CATEGORIES:
            idx = [i for i, p in enumerate(probes) if p.category == cat]
            by_cat[str(cat)] = {str(b): _mean([recall[m][b][i] for i in idx]) for b in BUDGETS}
        out[m] = {
            "recall": {str(b): _mean(recall[m][b]) for b in BUDGETS},
            "recall_by_category": by_cat,
            "context_tokens": {str(b): tokens[m][b] / count for b in BUDGETS},
            "latency_ms": percentiles(times[m]),
        }
        if rounds[m]:
            out[m]["mean_rounds"] = _mean(rounds[m])
    return out


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def latency_inprocess(
    mem: Memory, tenant: str, probes: Sequence[Probe], stop: threading.Event | None = None
) -> dict[str, float]:
    """`Memory.search` wall time, method rrf_expand, k=10, no budget, after a warm-up."""
    reqs = [SearchRequest(query=p.query, owner=p.owner) for p in probes]
    for r in reqs[:WARMUP]:
        mem.for_tenant(tenant).search(r)
    times = []
    for r in reqs:
        _check(stop)
        t0 = time.perf_counter()
        mem.for_tenant(tenant).search(r)
        times.append((time.perf_counter() - t0) * 1000)
    return percentiles(times)


def latency_sparse(
    mem: Memory, tenant: str, probes: Sequence[Probe], rs: Recipe,
    stop: threading.Event | None = None,
) -> dict[str, dict[str, float]]:
    """`Memory.search` wall time of rrf_expand (k=10, no budget) with the sparse list and without
    it, interleaved question by question, after a warm-up."""
    return _interleaved(mem, tenant, probes, {
        "with_sparse": ("rrf_expand", rs),
        "without_sparse": ("rrf_expand", rs.with_(sparse=False))}, stop)


def latency_side_by_side(
    mem: Memory, tenant: str, probes: Sequence[Probe], methods: Sequence[Method],
    stop: threading.Event | None = None,
) -> dict[str, dict[str, float]]:
    """`Memory.search` wall time per method, k=10, no budget, the methods interleaved question by
    question (a busy machine slows them alike), after a warm-up."""
    return _interleaved(mem, tenant, probes, {m: (m, None) for m in methods}, stop)


def _interleaved(
    mem: Memory, tenant: str, probes: Sequence[Probe],
    variants: dict[str, tuple[Method, Recipe | None]],
    stop: threading.Event | None = None,
) -> dict[str, dict[str, float]]:
    """Wall time of each variant (a method, and a recipe or the Memory's own), k=10, no budget,
    the variants interleaved question by question, after a warm-up."""
    tm = mem.for_tenant(tenant)
    for p in probes[:WARMUP]:
        for m, rs in variants.values():
            tm.search(SearchRequest(query=p.query, owner=p.owner, method=m),
                      rs and rs.for_method(m))
    times: dict[str, list[float]] = {name: [] for name in variants}
    for p in probes:
        _check(stop)
        for name, (m, rs) in variants.items():
            req = SearchRequest(query=p.query, owner=p.owner, method=m)
            t0 = time.perf_counter()
            tm.search(req, rs and rs.for_method(m))
            times[name].append((time.perf_counter() - t0) * 1000)
    return {name: percentiles(t) for name, t in times.items()}


def latency_stages(
    mem: Memory, tenant: str, probes: Sequence[Probe], stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Where one-shot search time goes (rrf_expand, k=10, no budget, after a warm-up): the mean
    milliseconds of each stage `search` times (`graphmem.retrieval.search.STAGES`), then
    ``serialise`` (the reply as JSON, as the API sends it) and ``other`` (the wall time of
    `Memory.search` that no stage accounts for: the thread hand-off, metrics, ...)."""
    for p in probes[:WARMUP]:
        mem.for_tenant(tenant).search(SearchRequest(query=p.query, owner=p.owner))
    sums: dict[str, float] = {}
    walls: list[float] = []
    for p in probes:
        _check(stop)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        res = mem.for_tenant(tenant).search(SearchRequest(query=p.query, owner=p.owner),
                                            timings=timings)
        t1 = time.perf_counter()
        res.model_dump_json()
        timings["serialise"] = (time.perf_counter() - t1) * 1000
        walls.append((t1 - t0) * 1000)
        timings["other"] = walls[-1] - sum(v for k, v in timings.items() if k != "serialise")
        for stage, ms in timings.items():
            sums[stage] = sums.get(stage, 0.0) + ms
    n = max(len(probes), 1)
    return {"mean_ms": {k: v / n for k, v in sums.items()}, "searches": len(walls),
            "wall_mean_ms": _mean(walls),
            "wall_median_ms": float(np.median(walls)) if walls else 0.0}


def _stage_lines(lat: dict[str, Any]) -> list[str]:
    """The per-stage table of the report (`latency_stages`), with the HTTP overhead."""
    stages = lat.get("stages")
    if not stages:
        return []
    means = stages["mean_ms"]
    lines = [f"Where the time goes (rrf_expand, mean ms of {stages['searches']} searches; "
             f"wall mean {stages['wall_mean_ms']:.1f}, median {stages['wall_median_ms']:.1f})"]
    lines += [f"  {k:<18}{v:7.2f}" for k, v in means.items()]
    if "http" in lat and "inprocess" in lat:
        lines.append(f"  {'http (p50 - p50)':<18}"
                     f"{lat['http']['p50'] - lat['inprocess']['p50']:7.2f}")
    return lines


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise RuntimeError("stopped")


def _off_main(stop: threading.Event, fn: Callable[..., T], *args: Any) -> T:
    """Run an untimed stage in a worker thread (there torch runs the model many times faster on a
    busy machine, see `latency_ms.inprocess_worker_thread`); the caller stays responsive to
    signals and tells the stage to stop if one interrupts it."""
    with ThreadPoolExecutor(1, thread_name_prefix="bench") as pool:
        future = pool.submit(fn, *args)
        try:
            return future.result()
        except BaseException:
            stop.set()
            raise


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """SIGTERM raises SystemExit, so the cleanup in ``finally`` still runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _torch_threads() -> int | None:
    try:
        return int(importlib.import_module("torch").get_num_threads())
    except ImportError:
        return None


def _revision() -> str | None:
    """The commit the benchmark ran on (and whether the tree had changes), if in a checkout."""
    import subprocess

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=Path(__file__).parent).stdout
        return rev + ("+changes" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def latency_http(
    settings: Settings, mem: Memory, tenant: str, probes: Sequence[Probe]
) -> dict[str, float]:
    """The same searches through the real API (uvicorn on a loopback port, Bearer key)."""
    import httpx
    import uvicorn

    from graphmem.api.app import create_app

    key = "gm_bench_" + secrets.token_urlsafe(16)
    app = create_app(settings.model_copy(update={"api_keys": {hash_api_key(key): tenant}}), mem)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, name="bench-uvicorn", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the benchmark's API server did not start")
            time.sleep(0.05)
        bodies = [{"query": p.query, "owner": p.owner} for p in probes]
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers,
                          timeout=60) as client:
            for body in bodies[:WARMUP]:
                client.post("/v1/search", json=body).raise_for_status()
            times = []
            for body in bodies:
                t0 = time.perf_counter()
                client.post("/v1/search", json=body).raise_for_status()
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    return percentiles(times)


def run_peer(
    settings: Settings, mem: Memory, tenant: str, convs: Sequence[locomo.Conversation],
    probes: Sequence[Probe], out: dict[str, Any], stop: threading.Event | None = None,
) -> dict[str, Any]:
    """mem0 on the same messages and questions (`graphmem.bench.peer_mem0`), its search timed
    against graphmem's default search (in-process, k=10) question by question; recall and ingest
    compared with graphmem's ``rrf_expand`` and measured ingest of this run."""
    from urllib.parse import urlsplit

    from graphmem.bench import peer_mem0
    from graphmem.embeddings import _resolve as resolve_model

    bolt = urlsplit(settings.bolt_uri)
    allowed = {(bolt.hostname or "127.0.0.1", bolt.port or 7687)}

    def search(p: Probe) -> object:
        return mem.for_tenant(tenant).search(SearchRequest(query=p.query, owner=p.owner,
                                                           k=peer_mem0.LATENCY_K))

    result = peer_mem0.run(convs, probes, resolve_model(settings.embedding_model),
                           mem.embedder.dimensions, search, allowed, stop)
    ours = {"recall": out["methods"]["rrf_expand"]["recall"],
            "latency_ms": result["latency_ms"]["graphmem"],
            "ingest_messages_per_s": out["ingest"]["messages_per_s"]}
    theirs = {"recall": result["recall"], "latency_ms": result["latency_ms"]["peer"],
              "ingest_messages_per_s": result["ingest"]["messages_per_s"]}
    result["comparison"] = peer_mem0.comparison(ours, theirs)
    return result


def _row(label: str, values: dict[str, float], fmt: str = "{:7.3f}") -> str:
    return f"  {label:<18}" + "".join(fmt.format(values[str(b)]) for b in BUDGETS)


def report(out: dict[str, Any]) -> str:
    """The figures as a plain-text table."""
    head = f"  {'':<18}" + "".join(f"{'@' + str(b):>7}" for b in BUDGETS)
    ing, lat = out["ingest"], out.get("latency_ms")
    shown = [m for m in (*METHODS, *FORMED_METHODS) if m in out["methods"]]
    lines = [
        f"LoCoMo evidence recall: {out['conversations']} conversations, {ing['messages']} "
        f"messages, {out['questions']} questions (categories 1-4"
        f"{', one in ' + str(out['every']) if out.get('every', 1) > 1 else ''}), preset "
        f"{out['settings']['preset']!r}",
        "", "Recall (share of gold evidence among the returned messages), by message budget",
        head, *(_row(m, out["methods"][m]["recall"]) for m in shown),
    ]
    for cat, name in CATEGORIES.items():
        n = out["questions_by_category"][str(cat)]
        lines += ["", f"Category {cat} {name} (n={n})", head]
        lines += [_row(m, out["methods"][m]["recall_by_category"][str(cat)]) for m in shown]
    if "without_sparse" in out:
        lines += ["", "The same methods without the sparse list", head]
        lines += [_row(m, v["recall"]) for m, v in out["without_sparse"].items()]
        for cat in CATEGORIES:
            lines += [_row(f"{m} c{cat}", v["recall_by_category"][str(cat)])
                      for m, v in out["without_sparse"].items()]
        lines += [f"  rrf_expand {name.replace('_', ' ')}: p50 {v['p50']:.1f} ms, p95 "
                  f"{v['p95']:.1f} ms (in-process, interleaved)"
                  for name, v in out.get("latency_sparse_ms", {}).items()]
    lines += ["", "Mean context tokens", head]
    lines += [_row(m, out["methods"][m]["context_tokens"], "{:7.0f}") for m in shown]
    if "ablation" in out:
        lines += ["", "Ablation of rrf_windows' lists (recall; per category in the JSON)", head]
        lines += [_row(v, a["recall"]) for v, a in out["ablation"].items()]
    lines += [
        "", f"Ingest: {ing['messages']} messages in {ing['seconds']:.1f} s = "
        f"{ing['messages_per_s']:.1f} messages/s (batches of {BATCH}, embedding + commit, "
        f"pipelined; model {out['settings']['embedding_model']}); before it, the warm-up "
        f"passes (then deleted) from the server's start: "
        f"{' / '.join(f'{w:.1f}' for w in ing['warmup_messages_per_s']) or 'none'} messages/s",
    ]
    if lat is None:
        lines += ["", f"Total {out['duration_s']:.0f} s (recall only)"]
        return "\n".join(lines)
    lines += [
        "Search latency (rrf_expand, k=10, no budget)        p50 ms   p95 ms",
        *(f"  {label:<48}{lat[key]['p50']:>7.1f}  {lat[key]['p95']:>7.1f}" for key, label in (
            ("inprocess", "in-process, calling (main) thread"),
            ("inprocess_worker_thread", "in-process, worker thread"),
            ("http", "HTTP POST /v1/search (uvicorn, loopback)"))),
        *(f"  {m + ', interleaved with the others':<48}{v['p50']:>7.1f}  {v['p95']:>7.1f}"
          for m, v in lat.get("by_method", {}).items()),
        *_stage_lines(lat),
    ]
    if "episodes" in out:
        ep, tm = out["episodes"], out["temporal"]
        lines += [
            "", f"Episodes ({ep['formed_by']}): {ep['episodes']} from {ep['sessions']} sessions "
            f"in {ep['formation_s']:.1f} s, {ep['messages_per_episode']:.1f} messages each",
            head, _row("episodes recall", out["methods"]["episodes"]["recall"]),
            _row("messages returned", out["methods"]["episodes"]["messages_returned"],
                 "{:7.1f}"),
            "", f"Temporal questions with a single-date answer (n={tm['questions']}): answer "
            f"date in the context (rrf_expand, {tm['budget']} messages): normalised "
            f"{tm['answer_in_context']['normalised']:.3f}, "
            f"raw {tm['answer_in_context']['raw']:.3f}",
        ]
    if "units" in out:
        lines += ["", "Unit study: vector recall alone, exact cosine, by embedded unit", head]
        lines += [_row(k, out["units"][k]["recall"]) for k in KINDS]
    if "peer" in out:
        from graphmem.bench.peer_mem0 import notes, table

        lines += ["", table(out["peer"]["peer"], out["peer"]["comparison"], notes(out["peer"]))]
    lines += ["", f"Total {out['duration_s']:.0f} s"]
    return "\n".join(lines)


def main(
    settings: Settings, data: Path, json_out: Path | None, limit: int | None, *,
    units: bool = True, peer: str | None = None, recall_only: bool = False,
    methods: Sequence[Method] | None = None, every: int = 1,
) -> dict[str, Any]:
    """Run the benchmark, print the table, write ``json_out``; returns the figures. ``peer``
    ("mem0") also runs that system on the same messages and questions (`peer_mem0`).
    ``every``: score every n-th question only (the first, the n+1-th, ...), a quicker estimate;
    every conversation is still ingested."""
    if every < 1:
        raise ValueError(f"every must be at least 1, not {every}")
    if peer is not None:  # before a long run: mem0ai missing is one line
        from graphmem.bench.peer_mem0 import require

        require(settings.embedder)
    started, t_start = datetime.now(UTC), time.perf_counter()
    convs = locomo.load(data)[:limit] if limit is not None else locomo.load(data)
    probes, skipped = probes_of(convs)
    probes = probes[::every]
    tenant = "bench-" + secrets.token_hex(6)
    mem = Memory.open(settings)
    rs = mem.recipe()  # the configured preset; each method runs `rs.for_method`
    owners: list[str] = []
    stop = threading.Event()
    stages: dict[str, float] = {}
    out: dict[str, Any] = {
        "started_at": started.isoformat(),
        "data": {"path": str(data.resolve()),
                 "sha256": hashlib.sha256(data.read_bytes()).hexdigest()},
        "settings": {"preset": settings.retrieval_preset,
                     **{k: v for k, v in rs.flat().items() if k != "method"},
                     "embedding_model": mem.embedder.name, "sparse_model": settings.sparse,
                     "embedding_dimensions": mem.embedder.dimensions,
                     "neo4j_version": mem.store.server_version, "ingest_batch": BATCH,
                     "torch_threads": _torch_threads(), "cpus": os.cpu_count()},
        "tenant": tenant, "conversations": len(convs), "questions": len(probes), "every": every,
        "questions_by_category": {
            str(c): sum(p.category == c for p in probes) for c in CATEGORIES
        },
        "skipped": skipped, "stage_seconds": stages, "git_revision": _revision(),
    }

    def stage(name: str, fn: Callable[[], T]) -> T:
        _log(f"{name} ...")
        t0 = time.perf_counter()
        result = fn()
        stages[name] = time.perf_counter() - t0
        return result

    def save() -> None:
        """Write what is measured so far (a long run's figures survive an interruption)."""
        if json_out is not None:
            json_out.write_text(json.dumps(out, indent=2, default=str) + "\n", encoding="utf-8")

    with _sigterm_exits():
        try:
            warm = [] if recall_only else stage("warm-up", lambda: warm_up(mem, tenant, convs))
            out["ingest"] = {"cold": warm[0] if warm else None, "warmup_messages_per_s": [
                w["messages_per_s"] for w in warm]}
            out["ingest"].update(stage("ingest", lambda: ingest_all(mem, tenant, convs, owners)))
            out["episodes"] = stage("formation", lambda: form_all(mem, tenant, convs))
            formed = [m for m in FORMED_METHODS if methods is None or m in methods]
            one_shot = [m for m in METHODS if methods is None or m in methods]
            out["methods"] = stage("recall_formed", lambda: _off_main(
                stop, score, mem, tenant, probes, rs, stop, formed))
            save()
            if not recall_only:
                out["ablation"] = stage("ablation", lambda: _off_main(
                    stop, ablation, mem, tenant, probes, rs, BUDGETS, tuple(CATEGORIES), stop))
                save()
            out["methods"].update(stage("recall", lambda: _off_main(
                stop, score, mem, tenant, probes, rs, stop, one_shot)))
            save()
            if rs.lists.sparse:
                out["without_sparse"] = stage("recall_without_sparse", lambda: _off_main(
                    stop, score, mem, tenant, probes, rs.with_(sparse=False), stop,
                    [m for m in SPARSE_METHODS if m in one_shot]))
                out["latency_sparse_ms"] = stage("latency_sparse", lambda: _off_main(
                    stop, latency_sparse, mem, tenant, probes, rs, stop))
                save()
            if not recall_only:
                out["latency_ms"] = stage("latency", lambda: {
                    "inprocess": latency_inprocess(mem, tenant, probes),
                    "inprocess_worker_thread": _off_main(
                        stop, latency_inprocess, mem, tenant, probes, stop),
                    "http": latency_http(settings, mem, tenant, probes),
                    "by_method": _off_main(stop, latency_side_by_side, mem, tenant, probes,
                                           ("rrf_expand", "rrf_windows", "graph", "iterative"),
                                           stop),
                    "stages": _off_main(stop, latency_stages, mem, tenant, probes, stop),
                })
                if peer is not None:
                    out["peer"] = stage("peer", lambda: _off_main(
                        stop, run_peer, settings, mem, tenant, convs, probes, out, stop))
                    save()
                out["methods"]["episodes"] = stage("episodes", lambda: _off_main(
                    stop, score_episodes, mem, tenant, probes, rs, BUDGETS))
                answers = {(c.messages[0].owner, q.question): q.answer
                           for c in convs if c.messages for q in c.questions}
                out["temporal"] = stage("temporal", lambda: _off_main(
                    stop, temporal_in_context, mem, tenant, probes, answers, rs))
                if units:
                    out["units"] = stage("units", lambda: _off_main(
                        stop, unit_study, mem.embedder, convs, probes, BUDGETS, stop))
        finally:
            try:
                for owner in owners:
                    mem.for_tenant(tenant).messages.forget_owner(owner)
            finally:
                mem.close()
    out["duration_s"] = time.perf_counter() - t_start
    print(report(out))
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out
