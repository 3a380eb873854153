"""How the tau-bench benchmark (`graphmem.bench.tau`) scores procedural memory. Pure.

* A run's labels: its task, its kind (the set of write actions its task's ground truth makes)
  and its customer (tau-bench's ``user_id``); clusters are scored by the adjusted Rand index
  against each.
* Retrieval for one query: the share of the task's ground-truth write actions among the steps
  of the top k skills (`covered`), and the precision of the writes those skills recommend
  (`precision`: the share of their write steps the task makes); the ceiling is the best a
  perfect choice of k skills among those formed would cover (`best_of`); how much of the task's
  writes the request names and some skill formed makes (`named`) says how far recommending
  only what is asked can go.
* Cross-validation of the clustering weight: the weight best on the training runs
  (`margin`: ARI against the kind plus ARI against the task, less ARI against the customer) is
  scored on the test runs.
* The clustering's ceiling (`clustering_ceiling`): what groupings of whole tasks, merged only
  within a kind and chosen knowing the labels, score against the task, the kind and the
  customer, and whether any meets the `TARGETS`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from graphmem.procedural.clustering import Point, adjusted_rand_index, cluster
from graphmem.procedural.models import Action, Skill, SkillStep
from graphmem.procedural.recommend import action_match
from graphmem.procedural.steps import writes

LABELS = ("task", "kind", "customer")
TARGETS = {"task": 0.7, "kind": 0.6}
"""The clustering's targets: ARI against the task and the kind at least these, each above the
ARI against the customer (reported against, never tuned to)."""
MAX_GROUPINGS = 100_000
"""`clustering_ceiling` enumerates at most this many groupings (else it reports none)."""


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


def named(gold: set[str], request: str, skills: Sequence[Skill]) -> float:
    """The share of ``gold`` that some skill among ``skills`` makes and that ``request`` names
    (the write's verb or a plain synonym of it, `graphmem.procedural.recommend.action_match`):
    a diagnostic of the data, not a bound (a skill may also carry writes nobody named)."""
    asked = {w for w in recommended(skills)
             if action_match(request, [SkillStep(tool=w, writes=True, support=1)]) > 0}
    return len(gold & asked) / len(gold)


def best_single(gold: set[str], skills: Sequence[Skill]) -> float:
    return best_of(gold, skills, 1)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def partitions(items: Sequence[str]) -> Iterator[list[list[str]]]:
    """Every partition of ``items`` into groups (Bell(n) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        yield [[first], *p]
        for i in range(len(p)):
            yield [*p[:i], [first, *p[i]], *p[i + 1:]]


def bell(n: int) -> int:
    """How many partitions ``n`` items have (the Bell triangle)."""
    row = [1]
    for _ in range(n):
        nxt = [row[-1]]
        for x in row:
            nxt.append(nxt[-1] + x)
        row = nxt
    return row[0]


def meets(ari: Mapping[str, float]) -> bool:
    """ARI against the task and the kind at their `TARGETS`, each above that against the
    customer."""
    return all(ari[k] >= v and ari[k] > ari["customer"] for k, v in TARGETS.items())


def clustering_ceiling(truth: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """What clustering can reach against these labels (one per case): every grouping of whole
    tasks that merges tasks only within a kind (from one group per task, ARI task 1, to one per
    kind, ARI kind 1), scored like the clusters. Returns how many there are, the front (no other
    scores at least as well against both the task and the kind; the lowest ARI against the
    customer among equals), by ARI against the task, the best by `margin` of those that meet
    the `TARGETS` (None when none does) and the nearest to them (that best, else the front's
    best by `reach`). Splitting
    a task or merging tasks of two kinds moves away from both labels at once, so it is left
    out. ``groupings`` is 0 (nothing computed) beyond `MAX_GROUPINGS`."""
    kinds: dict[str, list[str]] = {}
    for t in sorted({(t["kind"], t["task"]) for t in truth}):
        kinds.setdefault(t[0], []).append(t[1])
    count = 1
    for tasks in kinds.values():
        count *= bell(len(tasks))
    if count > MAX_GROUPINGS:
        return {"groupings": 0, "front": [], "meeting": 0, "best_meeting": None,
                "nearest": None}
    scored: dict[tuple[float, float], dict[str, float]] = {}
    meeting: list[dict[str, float]] = []
    for choice in itertools.product(*(list(partitions(ts)) for ts in kinds.values())):
        group = {t: f"{k}/{g}" for k, p in enumerate(choice) for g, ts in enumerate(p)
                 for t in ts}
        ari = aris(truth, [group[t["task"]] for t in truth])
        key = (round(ari["task"], 9), round(ari["kind"], 9))
        if key not in scored or ari["customer"] < scored[key]["customer"]:
            scored[key] = ari
        if meets(ari):
            meeting.append(ari)
    front = [a for (t, k), a in scored.items()
             if not any(t2 >= t and k2 >= k and (t2, k2) != (t, k) for t2, k2 in scored)]
    return {"groupings": count, "front": sorted(front, key=lambda a: a["task"]),
            "meeting": len(meeting),
            "best_meeting": max(meeting, key=margin) if meeting else None,
            "nearest": max(meeting, key=margin) if meeting else max(front, key=reach)}


def reach(ari: Mapping[str, float]) -> float:
    """How near ARIs come to the `TARGETS`: the smaller of their shares of each (1: both met)."""
    return min(ari[k] / v for k, v in TARGETS.items())
