"""tau-bench benchmark of procedural memory: real runs of an agent (OpenAI chat format) in, cases,
clusters and skills out, and skills retrieved for new requests.

* ingest: every run as one trace (``POST /v1/traces``'s path), in batches of `BATCH`, after a
  warm-up pass of `WARMUP` runs (deleted); runs/s.
* formation (no LLM): cases of every trace, then clusters and skills; seconds.
* clustering: adjusted Rand index of the clusters against the task grouping (the runs of one
  task), against the customer grouping (the runs of one simulated customer: tau-bench gives
  some customers several variants of one request about one booking), and against the kind
  grouping (tasks sharing the same set of write actions); ``customer_bound`` is what a perfect
  customer grouping would score against the task grouping.
* retrieval, leave-one-task-out: for each task with ground-truth write actions, the skills are
  formed from the other tasks' runs only (a throwaway owner per task), then each of its runs'
  first user message is the query; scored: the share of the task's distinct ground-truth write
  actions among the steps of the top skill (k=1) and of the top three (k=3).
Everything written goes into a throwaway tenant, deleted at the end (even on error).
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graphmem.bench.units import percentiles
from graphmem.config import Settings
from graphmem.embeddings import Embedder, WrappedEmbedder
from graphmem.procedural.clustering import adjusted_rand_index
from graphmem.procedural.models import Skill, SkillSearch, TraceIn
from graphmem.procedural.steps import writes
from graphmem.progress import track
from graphmem.service import Memory
from graphmem.store.procedural import ProceduralStore

BATCH = 50
WARMUP = 20
T0 = datetime(2024, 5, 15, 20, 0, tzinfo=UTC)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class CachedEmbedder(WrappedEmbedder):
    """The same texts embed once across the leave-one-task-out folds (vectors are identical)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self._cache: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                self._cache.update(zip(todo, self._inner.embed(todo), strict=True))
            return [self._cache[t] for t in texts]


def load(path: Path) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return runs


def trace_of(run: dict[str, Any], owner: str, n: int) -> TraceIn:
    return TraceIn(
        id=run_id(owner, run), owner=owner, agent="gpt-4o",
        session_id=f"task-{run['task_id']}-trial-{run['trial']}",
        started_at=T0 + timedelta(minutes=n), messages=run["traj"],
        outcome="success" if run["reward"] >= 1.0 else "failure", score=run["reward"],
        conditions={"domain": "airline", "model": "gpt-4o"})


def run_id(owner: str, run: dict[str, Any]) -> str:
    return f"{owner}-tau-{run['task_id']}-{run['trial']}"


def gold_writes(run: dict[str, Any]) -> set[str]:
    return {a["name"] for a in run["info"]["task"]["actions"] if writes(a["name"])}


def customer_of(run: dict[str, Any]) -> str:
    """The simulated customer of a run (tau-bench's ``user_id``; the task when absent)."""
    return str(run["info"]["task"].get("user_id") or f"task-{run['task_id']}")


def first_user(run: dict[str, Any]) -> str:
    return next(str(m["content"]) for m in run["traj"] if m["role"] == "user" and m["content"])


def ingest(mem: Memory, tenant: str, owner: str, runs: Sequence[dict[str, Any]]) -> float:
    start = time.perf_counter()
    traces = [trace_of(r, owner, n) for n, r in enumerate(runs)]
    for i in range(0, len(traces), BATCH):
        mem.for_tenant(tenant).traces.ingest(traces[i : i + BATCH])
    return time.perf_counter() - start


def form(mem: Memory, tenant: str, owner: str, runs: Sequence[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for r in track(runs, "forming cases"):
        mem.procedural.form_trace(tenant, run_id(owner, r), jobs=False)
    mem.procedural.form_skills(tenant, owner)
    return time.perf_counter() - start


def clustering(mem: Memory, tenant: str, owner: str,
               runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    by_trace = {run_id(owner, r): r for r in runs}
    store = ProceduralStore(mem.store, tenant)
    cases = store.owner_cases(owner, 100_000)
    skill_of = {r["c"]["id"]: r["skill"] for r in store.get_cases([c["id"] for c in cases])}
    task = [str(by_trace[c["trace_id"]]["task_id"]) for c in cases]
    kind = [",".join(sorted(gold_writes(by_trace[c["trace_id"]]))) for c in cases]
    customer = [customer_of(by_trace[c["trace_id"]]) for c in cases]
    found = [c["cluster"] or c["id"] for c in cases]
    skills = [skill_of.get(c["id"]) or c["id"] for c in cases]
    return {"cases": len(cases), "clusters": len(set(found)), "tasks": len(set(task)),
            "kinds": len(set(kind)), "customers": len(set(customer)),
            "ari": {"task": adjusted_rand_index(task, found),
                    "customer": adjusted_rand_index(customer, found),
                    "customer_bound": adjusted_rand_index(task, customer),
                    "kind": adjusted_rand_index(kind, found),
                    "kind_skills": adjusted_rand_index(kind, skills)}}


def covered(gold: set[str], skills: Sequence[Skill]) -> float:
    """The share of ``gold`` (a task's write actions) among the steps of ``skills``."""
    tools = {s.tool for sk in skills for s in sk.steps}
    return len(gold & tools) / len(gold)


def best_single(gold: set[str], skills: Sequence[Skill]) -> float:
    """What a perfect choice of one skill among ``skills`` would score (`covered`)."""
    return max((covered(gold, [sk]) for sk in skills), default=0.0)


def retrieval(mem: Memory, tenant: str, runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Leave-one-task-out: each task's runs query skills formed from the other tasks' runs.
    Besides action recall at 1 and 3, ``best_available`` is what a perfect choice of one skill
    among those formed would score: the ceiling of the ranking, given the skills."""
    tasks = sorted({r["task_id"] for r in runs})
    recall = {1: 0.0, 3: 0.0}
    ceiling = 0.0
    took: list[float] = []
    scored = skipped = 0
    per_task: dict[str, Any] = {}
    for t in track(tasks, "leave-one-task-out"):
        mine = [r for r in runs if r["task_id"] == t]
        gold = gold_writes(mine[0])
        if not gold:
            skipped += 1
            continue
        owner = f"loto-{t}"
        rest = [r for r in runs if r["task_id"] != t]
        ingest(mem, tenant, owner, rest)
        form(mem, tenant, owner, rest)
        every = mem.for_tenant(tenant).skills.search(
            SkillSearch(query=first_user(mine[0]), owner=owner, k=100, cases_per_skill=0)).skills
        best = best_single(gold, every)
        got = {1: 0.0, 3: 0.0}
        for r in mine:
            t0 = time.perf_counter()
            res = mem.for_tenant(tenant).skills.search(
                SkillSearch(query=first_user(r), owner=owner, k=3, cases_per_skill=0))
            took.append((time.perf_counter() - t0) * 1000)
            for k in (1, 3):
                got[k] += covered(gold, res.skills[:k])
            scored += 1
        for k in (1, 3):
            recall[k] += got[k]
        ceiling += best * len(mine)
        per_task[str(t)] = {"gold": sorted(gold), "recall_1": got[1] / len(mine),
                            "recall_3": got[3] / len(mine), "best_available": best}
        mem.for_tenant(tenant).messages.forget_owner(owner)
        _log(f"  task {t}: recall@1 {got[1] / len(mine):.2f} @3 {got[3] / len(mine):.2f}")
    n = max(scored, 1)
    return {"action_recall": {"1": recall[1] / n, "3": recall[3] / n},
            "best_available": ceiling / n, "queries": scored,
            "latency_ms": percentiles(took),
            "tasks_without_writes": skipped, "per_task": per_task}


def run(settings: Settings, data: Path, json_out: Path | None) -> dict[str, Any]:
    runs = load(data)
    base = Memory.open(settings)
    mem = Memory(settings, base.store, CachedEmbedder(base.embedder))
    mem.procedural.llm = None  # formation without an LLM, whatever is configured
    tenant, owner = f"bench-tau-{secrets.token_hex(4)}", "tau"
    try:
        _log(f"{len(runs)} runs; warm-up (compiles Neo4j's query plans), then ingesting")
        ingest(mem, tenant, "warmup", runs[:WARMUP])
        mem.for_tenant(tenant).messages.forget_owner("warmup")
        ingest_s = ingest(mem, tenant, owner, runs)
        _log(f"ingest {len(runs) / ingest_s:.1f} runs/s; forming")
        formation_s = form(mem, tenant, owner, runs)
        _log(f"formation {formation_s:.1f} s; clustering")
        clusters = clustering(mem, tenant, owner, runs)
        _log(f"ARI task {clusters['ari']['task']:.3f} kind {clusters['ari']['kind']:.3f}")
        skills = mem.for_tenant(tenant).skills.search(
            SkillSearch(query="flight", owner=owner, k=100))
        retrieved = retrieval(mem, tenant, runs)
        out = {"runs": len(runs), "solved": sum(r["reward"] >= 1.0 for r in runs),
               "ingest": {"runs_per_s": len(runs) / ingest_s, "seconds": ingest_s},
               "formation_s": formation_s, "clustering": clusters,
               "skills_formed": len(skills.skills), "retrieval": retrieved}
    finally:
        for o in [owner, "warmup", *(f"loto-{t}" for t in {r["task_id"] for r in runs})]:
            mem.for_tenant(tenant).messages.forget_owner(o)
        base.close()
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    _log(json.dumps({k: v for k, v in out.items() if k != "retrieval"}, default=str)[:2000])
    latency = retrieved["latency_ms"]
    _log(f"action recall @1 {retrieved['action_recall']['1']:.3f} "
         f"@3 {retrieved['action_recall']['3']:.3f} over {retrieved['queries']} queries "
         f"(a perfect choice of one skill: {retrieved['best_available']:.3f}); search p50 "
         f"{latency['p50']:.1f} ms, p95 {latency['p95']:.1f}")
    return out
