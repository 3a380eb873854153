"""tau-bench benchmark of procedural memory: real runs of an agent (OpenAI chat format) in, cases,
clusters and skills out, and skills retrieved for new requests (scoring: `tau_scoring`).

* ingest: every run as one trace (``POST /v1/traces``'s path), in batches of `BATCH`, after a
  warm-up pass of `WARMUP` runs (deleted); runs/s.
* formation (no LLM): cases of every trace, then clusters and skills; seconds.
* clustering: ARI of the clusters against the task, the kind (tasks sharing one set of write
  actions) and the customer (tau-bench gives some customers several requests); the same for
  every request weight of `graphmem.procedural.clustering.REQUEST_WEIGHTS` (``weights``), and
  for reference the grouping by the set of writes each run made (``writes_made``: what a
  grouping by what was done can reach against labels of what should have been done) and the
  ceiling (``ceiling``: what groupings of whole tasks chosen knowing the labels reach).
* retrieval: each held-out task's runs' first user messages are the queries; scored: the share
  of the task's ground-truth write actions among the steps of the top skill (k=1) and of the top
  three (k=3), the precision of the writes those skills recommend, and the ceiling (a perfect
  choice of 1 or 3 skills among those formed); ``named``: the share of the task's writes its
  request names and some skill formed makes.

Two ways to hold tasks out:
* ``--train FILE`` (transfer): skills are formed from the train file's runs only (``--train-tasks``
  keeps some of its tasks), and the runs of ``--data`` (``--tasks``) are clustered on their own
  (their ARI) and queried; the clustering weight is also chosen on the train runs and scored on
  the test runs (``clustering.cross_validated``).
* without it, leave-one-task-out: for each task, skills formed from the other tasks' runs.
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

from graphmem.bench import tau_scoring as score
from graphmem.bench.tau_scoring import best_single, covered, customer_of, gold_writes
from graphmem.bench.units import percentiles
from graphmem.config import Settings
from graphmem.embeddings import Embedder, WrappedEmbedder
from graphmem.procedural.clustering import REQUEST_WEIGHTS, adjusted_rand_index
from graphmem.procedural.models import Skill, SkillSearch, TraceIn
from graphmem.progress import track
from graphmem.service import Memory
from graphmem.store.procedural import ProceduralStore

__all__ = ["best_single", "covered", "customer_of", "gold_writes", "run"]

BATCH = 50
WARMUP = 20
K = 3
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


def load(path: Path, tasks: str | None = None) -> list[dict[str, Any]]:
    """The runs of a tau-bench file, only those of ``tasks`` (``"0-14"``) when given."""
    runs: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return score.select(runs, score.parse_tasks(tasks))


def trace_of(run: dict[str, Any], owner: str, n: int) -> TraceIn:
    return TraceIn(
        id=run_id(owner, run), owner=owner, agent="gpt-4o",
        session_id=f"task-{run['task_id']}-trial-{run['trial']}",
        started_at=T0 + timedelta(minutes=n), messages=run["traj"],
        outcome="success" if run["reward"] >= 1.0 else "failure", score=run["reward"],
        conditions={"domain": "airline", "model": "gpt-4o"})


def run_id(owner: str, run: dict[str, Any]) -> str:
    return f"{owner}-tau-{run['task_id']}-{run['trial']}"


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
    stores = mem.stores(tenant)
    for r in track(runs, "forming cases"):
        mem.procedural.form_trace(stores, run_id(owner, r), jobs=False)
    mem.procedural.form_skills(stores, owner)
    return time.perf_counter() - start


def clustering(mem: Memory, tenant: str, owner: str,
               runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ARI of the owner's clusters (and skills) against the labels of its runs, and of the
    clusters every request weight would give (``weights``)."""
    by_trace = {run_id(owner, r): r for r in runs}
    store = ProceduralStore(mem.store, tenant)
    cases = store.owner_cases(owner, 100_000)
    skill_of = {r["c"]["id"]: r["skill"] for r in store.get_cases([c["id"] for c in cases])}
    truth = {c["id"]: score.labels_of(by_trace[c["trace_id"]]) for c in cases}
    found = [c["cluster"] or c["id"] for c in cases]
    skills = [skill_of.get(c["id"]) or c["id"] for c in cases]
    labels = [truth[c["id"]] for c in cases]
    ari = score.aris(labels, found)
    made = [",".join(sorted(set(c["writes"] or []))) for c in cases]
    return {"cases": len(cases), "clusters": len(set(found)),
            "tasks": len({t["task"] for t in labels}), "kinds": len({t["kind"] for t in labels}),
            "customers": len({t["customer"] for t in labels}),
            "ari": {**ari, "customer_bound": adjusted_rand_index(
                        [t["task"] for t in labels], [t["customer"] for t in labels]),
                    "kind_skills": adjusted_rand_index([t["kind"] for t in labels], skills)},
            "writes_made": score.aris(labels, made),
            "ceiling": score.clustering_ceiling(labels),
            "weights": score.weight_grid(score.points_of(cases), truth, REQUEST_WEIGHTS)}


def queries(mem: Memory, tenant: str, owner: str, runs: Sequence[dict[str, Any]],
            took: list[float]) -> dict[str, Any]:
    """The held-out runs of one task as queries for ``owner``'s skills: recall and precision at
    1 and `K` per query, and the ceiling (the best choice of 1 and `K` skills formed)."""
    gold = gold_writes(runs[0])
    every = mem.for_tenant(tenant).skills.search(
        SkillSearch(query=first_user(runs[0]), owner=owner, k=100, cases_per_skill=0)).skills
    out: dict[str, Any] = {"gold": sorted(gold), "queries": len(runs),
                           "ceiling": {str(k): score.best_of(gold, every, k) for k in (1, K)}}
    recall: dict[int, list[float]] = {1: [], K: []}
    exact: dict[int, list[float]] = {1: [], K: []}
    top: list[str] = []
    for r in runs:
        t0 = time.perf_counter()
        found: list[Skill] = mem.for_tenant(tenant).skills.search(
            SkillSearch(query=first_user(r), owner=owner, k=K, cases_per_skill=0)).skills
        took.append((time.perf_counter() - t0) * 1000)
        top.append(" | ".join(s.name for s in found))
        for k in (1, K):
            recall[k].append(covered(gold, found[:k]))
            p = score.precision(gold, found[:k])
            if p is not None:
                exact[k].append(p)
    out["named"] = score.mean([score.named(gold, first_user(r), every) for r in runs])
    out.update({f"recall_{k}": score.mean(recall[k]) for k in (1, K)})
    out.update({f"precision_{k}": exact[k] for k in (1, K)})
    out["recommended"] = top
    return out


def summary(per_task: dict[str, dict[str, Any]], skipped: int,
            took: list[float]) -> dict[str, Any]:
    """Per-query means over the tasks scored (each task's queries weigh as many)."""
    n = sum(t["queries"] for t in per_task.values()) or 1

    def weighted(key: str) -> float:
        return float(sum(t[key] * t["queries"] for t in per_task.values()) / n)

    precise: dict[int, list[float]] = {1: [], K: []}
    for t in per_task.values():
        mine = {k: t.pop(f"precision_{k}") for k in (1, K)}
        t["precision"] = {str(k): score.mean(v) if v else None for k, v in mine.items()}
        for k in (1, K):
            precise[k] += mine[k]
    ceiling = {str(k): sum(t["ceiling"][str(k)] * t["queries"] for t in per_task.values()) / n
               for k in (1, K)}
    return {"action_recall": {"1": weighted("recall_1"), str(K): weighted(f"recall_{K}")},
            "named": weighted("named"),
            "precision": {str(k): score.mean(precise[k]) for k in (1, K)},
            "precision_queries": {str(k): len(precise[k]) for k in (1, K)},
            "ceiling": ceiling, "best_available": ceiling["1"],
            "queries": sum(t["queries"] for t in per_task.values()),
            "tasks": len(per_task), "tasks_without_writes": skipped,
            "latency_ms": percentiles(took), "per_task": per_task}


def by_task(runs: Sequence[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for r in runs:
        out.setdefault(int(r["task_id"]), []).append(r)
    return dict(sorted(out.items()))


def leave_one_task_out(mem: Memory, tenant: str, runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each task's runs query skills formed from the other tasks' runs (a throwaway owner)."""
    per_task: dict[str, dict[str, Any]] = {}
    took: list[float] = []
    skipped = 0
    for t, mine in track(list(by_task(runs).items()), "leave-one-task-out"):
        if not gold_writes(mine[0]):
            skipped += 1
            continue
        owner, rest = f"loto-{t}", [r for r in runs if r["task_id"] != t]
        ingest(mem, tenant, owner, rest)
        form(mem, tenant, owner, rest)
        per_task[str(t)] = queries(mem, tenant, owner, mine, took)
        mem.for_tenant(tenant).messages.forget_owner(owner)
        _log(f"  task {t}: recall@1 {per_task[str(t)]['recall_1']:.2f} "
             f"@{K} {per_task[str(t)][f'recall_{K}']:.2f}")
    return summary(per_task, skipped, took)


def transfer(mem: Memory, tenant: str, owner: str,
             runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each task of ``runs`` queries the skills ``owner`` formed from the training runs."""
    per_task: dict[str, dict[str, Any]] = {}
    took: list[float] = []
    skipped = 0
    for t, mine in by_task(runs).items():
        if not gold_writes(mine[0]):
            skipped += 1
            continue
        per_task[str(t)] = queries(mem, tenant, owner, mine, took)
    return summary(per_task, skipped, took)


def skills_formed(mem: Memory, tenant: str, owner: str) -> int:
    return len(ProceduralStore(mem.store, tenant).current_skills(owner))


def run(settings: Settings, data: Path, json_out: Path | None, train: Path | None = None,
        tasks: str | None = None, train_tasks: str | None = None) -> dict[str, Any]:
    runs = load(data, tasks)
    learn = load(train, train_tasks) if train is not None else runs
    if not runs or not learn:
        raise ValueError("no runs left after the task filters")
    base = Memory.open(settings)
    mem = Memory(settings, base.store, CachedEmbedder(base.embedder))
    mem.procedural.llm = None  # formation without an LLM, whatever is configured
    tenant = f"bench-tau-{secrets.token_hex(4)}"
    owners = ["tau", "test", "warmup", *(f"loto-{t}" for t in by_task(runs))]
    try:
        _log(f"{len(learn)} runs to learn from; warm-up (compiles Neo4j's query plans), then "
             "ingesting")
        ingest(mem, tenant, "warmup", learn[:WARMUP])
        mem.for_tenant(tenant).messages.forget_owner("warmup")
        ingest_s = ingest(mem, tenant, "tau", learn)
        _log(f"ingest {len(learn) / ingest_s:.1f} runs/s; forming")
        formation_s = form(mem, tenant, "tau", learn)
        out: dict[str, Any] = {
            "mode": "transfer" if train is not None else "leave-one-task-out", "tenant": tenant,
            "data": str(data), "tasks": tasks, "runs": len(runs),
            "solved": sum(r["reward"] >= 1.0 for r in runs),
            "ingest": {"runs_per_s": len(learn) / ingest_s, "seconds": ingest_s},
            "formation_s": formation_s, "skills_formed": skills_formed(mem, tenant, "tau")}
        if train is None:
            out["clustering"] = clustering(mem, tenant, "tau", runs)
            out["retrieval"] = leave_one_task_out(mem, tenant, runs)
        else:
            out.update({"train": str(train), "train_tasks": train_tasks,
                        "train_runs": len(learn)})
            learned = clustering(mem, tenant, "tau", learn)
            ingest(mem, tenant, "test", runs)
            form(mem, tenant, "test", runs)
            out["clustering"] = clustering(mem, tenant, "test", runs)
            out["clustering"]["train"] = {k: learned[k] for k in ("cases", "clusters", "ari")}
            out["clustering"]["cross_validated"] = score.cross_validated(
                learned["weights"], out["clustering"]["weights"])
            out["retrieval"] = transfer(mem, tenant, "tau", runs)
    finally:
        for o in owners:
            mem.for_tenant(tenant).messages.forget_owner(o)
        base.close()
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    _report(out)
    return out


def _report(out: dict[str, Any]) -> None:
    ari, got = out["clustering"]["ari"], out["retrieval"]
    _log(f"{out['mode']}: {out['skills_formed']} skills; clusters {out['clustering']['clusters']}"
         f", ARI task {ari['task']:.3f} kind {ari['kind']:.3f} customer {ari['customer']:.3f}")
    top = out["clustering"]["ceiling"]
    if top["nearest"] is not None:
        near = "/".join(f"{top['nearest'][k]:.3f}" for k in score.LABELS)
        _log(f"clustering ceiling: {top['meeting']} of {top['groupings']} groupings of whole "
             f"tasks meet the targets; nearest ARI task/kind/customer {near}")
    _log(f"action recall @1 {got['action_recall']['1']:.3f} @{K} {got['action_recall'][str(K)]:.3f}"
         f", precision @1 {got['precision']['1']:.3f} @{K} {got['precision'][str(K)]:.3f} over "
         f"{got['queries']} queries (ceiling @1 {got['ceiling']['1']:.3f} @{K} "
         f"{got['ceiling'][str(K)]:.3f}; named by the request {got['named']:.3f}); search p50 "
         f"{got['latency_ms']['p50']:.1f} ms, p95 {got['latency_ms']['p95']:.1f}")
