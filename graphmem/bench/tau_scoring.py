"""How the tau-bench benchmark (`graphmem.bench.tau`) scores procedural memory. Pure.

* A run's labels: its task, its kind (the set of write actions its task's ground truth makes)
  and its customer (tau-bench's ``user_id``); clusters are scored by the adjusted Rand index
  against each.
* Retrieval for one query: the share of the task's ground-truth write actions among the steps
  of the top k skills (`covered`), and the precision of the writes those skills recommend
  (`precision`: the share of their write steps the task makes); the ceiling is the best a
  perfect choice of k skills among those formed would cover (`best_of`).
* Cross-validation of the clustering weight: the weight best on the training runs
  (`margin`: ARI against the kind plus ARI against the task, less ARI against the customer) is
  scored on the test runs.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphmem.procedural.clustering import Point, adjusted_rand_index, cluster
from graphmem.procedural.models import Action, Skill
from graphmem.procedural.steps import writes

LABELS = ("task", "kind", "customer")


def gold_writes(run: Mapping[str, Any]) -> set[str]:
    """The state-changing tools of the run's task's ground-truth actions."""
    return {a["name"] for a in run["info"]["task"]["actions"] if writes(a["name"])}


def customer_of(run: Mapping[str, Any]) -> str:
    """The simulated customer of a run (tau-bench's ``user_id``; the task when absent)."""
    return str(run["info"]["task"].get("user_id") or f"task-{run['task_id']}")


def labels_of(run: Mapping[str, Any]) -> dict[str, str]:
    return {"task": str(run["task_id"]), "kind": ",".join(sorted(gold_writes(run))),
            "customer": customer_of(run)}


def parse_tasks(spec: str | None) -> set[int] | None:
    """``"0-14"`` or ``"0-4,7,9-11"`` as task ids; None (every task) for None or ''."""
    if not spec:
        return None
    found: set[int] = set()
    for part in spec.split(","):
        low, _, high = part.strip().partition("-")
        if not low.strip().isdigit() or (high and not high.strip().isdigit()):
            raise ValueError(f"tasks: {part!r} is neither a task id nor a range like 0-14")
        found.update(range(int(low), int(high or low) + 1))
    return found


def select(runs: Iterable[dict[str, Any]], tasks: set[int] | None) -> list[dict[str, Any]]:
    return [r for r in runs if tasks is None or int(r["task_id"]) in tasks]


def aris(truth: Sequence[Mapping[str, str]], found: Sequence[str]) -> dict[str, float]:
    """ARI of ``found`` against each label of `LABELS`."""
    return {k: adjusted_rand_index([t[k] for t in truth], found) for k in LABELS}


def margin(ari: Mapping[str, float]) -> float:
    """What the clustering weight is chosen by: grouping by kind and by task beyond grouping by
    customer (a sum, so a clustering that groups nothing, every ARI near 0, does not win)."""
    return ari["kind"] + ari["task"] - ari["customer"]


def points_of(rows: Sequence[Mapping[str, Any]]) -> list[Point]:
    """Stored cases (``owner_cases`` rows) as clustering sees them."""
    return [Point(r["id"], r["embedding"],
                  [Action.model_validate(a) for a in json.loads(r["actions_json"])])
            for r in rows]


def weight_grid(points: Sequence[Point], truth: Mapping[str, Mapping[str, str]],
                weights: Sequence[float]) -> dict[str, dict[str, Any]]:
    """For each request weight: the clusters of ``points`` and their ARI against the labels
    (``truth``: case id -> labels)."""
    out: dict[str, dict[str, Any]] = {}
    ids = sorted(p.id for p in points)
    for w in weights:
        groups = cluster(points, w)
        label = {i: n for n, g in enumerate(groups) for i in g}
        ari = aris([truth[i] for i in ids], [str(label[i]) for i in ids])
        out[f"{w:g}"] = {"clusters": len(groups), "ari": ari, "margin": margin(ari)}
    return out


def cross_validated(train: Mapping[str, Mapping[str, Any]],
                    test: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The weight with the best `margin` on ``train`` (the smallest on ties) and what it scores
    on ``test``."""
    best = max(train, key=lambda w: (train[w]["margin"], -float(w)))
    return {"weight": float(best), "chosen_by": "margin on the training runs",
            "train": train[best], "test": test[best]}


def recommended(skills: Sequence[Skill]) -> set[str]:
    """The write steps of ``skills``."""
    return {s.tool for sk in skills for s in sk.steps if s.writes}


def covered(gold: set[str], skills: Sequence[Skill]) -> float:
    """The share of ``gold`` (a task's write actions) among the steps of ``skills``."""
    tools = {s.tool for sk in skills for s in sk.steps}
    return len(gold & tools) / len(gold)


def precision(gold: set[str], skills: Sequence[Skill]) -> float | None:
    """The share of the writes ``skills`` recommend that the task makes; None when they
    recommend none."""
    found = recommended(skills)
    return len(gold & found) / len(found) if found else None


def best_of(gold: set[str], skills: Sequence[Skill], k: int) -> float:
    """What a perfect choice of ``k`` skills among ``skills`` would score (`covered`)."""
    useful = [sk for sk in skills if gold & recommended([sk])]
    if not useful:
        return 0.0
    return max(covered(gold, list(chosen))
               for chosen in itertools.combinations(useful, min(k, len(useful))))


def best_single(gold: set[str], skills: Sequence[Skill]) -> float:
    return best_of(gold, skills, 1)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
