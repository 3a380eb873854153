"""Method ``iterative`` cross-validated on LoCoMo: leave one conversation out. Its rounds run
``rrf_windows`` with the PageRank list, re-ranked by the ranker of those lists; for each held-out
conversation that ranker (its weights and its neighbour decay, `ranker.fold_rankers`) is fitted
on the other conversations only, and the held-out questions are searched with it, every round
of the loop, at each budget. Recall is the mean over all questions (each scored by the fold that
held its conversation out), as `ranker.cross_validate` pools them. Beside it, the same path with
the shipped ranker (trained on the whole file: in-sample when the file is the one it was trained
on). The loop's own settings and the offline decider's thresholds were chosen by hand and stay
as they are (`Recipe`, `deciders.OfflineDecider`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from graphmem.bench import ranker as fitting
from graphmem.bench.units import Probe, evidence_recall
from graphmem.embeddings import QueryMemo
from graphmem.models import SearchRequest
from graphmem.progress import track
from graphmem.retrieval.deciders import OfflineDecider
from graphmem.retrieval.expansion import Selected
from graphmem.retrieval.iterative_search import iterative_messages
from graphmem.retrieval.plan import Plan
from graphmem.retrieval.recipes import Recipe
from graphmem.retrieval.rerank import Ranker
from graphmem.retrieval.search import message_lists, select_messages
from graphmem.service import Memory
from graphmem.store.core import Row

BUDGETS = fitting.BUDGETS
Run = Callable[[Probe, int, Ranker | None], tuple[list[str], int]]
"""One iterative search of a question at a budget with a ranker (None: the shipped one): the
ids it returns and its rounds."""


def scores(probes: Sequence[Probe], run: Run,
           ranker_of: Callable[[Probe], Ranker | None]) -> dict[str, Any]:
    """Mean recall per budget over every question (each searched with ``ranker_of`` its
    question), per category, and the mean rounds."""
    got: dict[int, list[tuple[int, float]]] = {b: [] for b in BUDGETS}
    rounds: list[int] = []
    for p in track(probes, "questions (iterative)"):
        ranker = ranker_of(p)
        for b in BUDGETS:
            ids, n = run(p, b, ranker)
            got[b].append((p.category, evidence_recall(p.gold, ids)))
            rounds.append(n)
    out: dict[str, Any] = {"recall": {}, "recall_by_category": {},
                           "mean_rounds": _mean([float(n) for n in rounds])}
    for b in BUDGETS:
        out["recall"][str(b)] = _mean([r for _, r in got[b]])
        for c in sorted({c for c, _ in got[b]}):
            out["recall_by_category"].setdefault(str(c), {})[str(b)] = _mean(
                [r for k, r in got[b] if k == c])
    return out


def with_ranker(plan: Plan, ranker: Ranker | None, default_decay: float) -> Plan:
    """The plan re-ranked by ``ranker`` (and expanded with its decay) instead of the shipped
    ranker of its lists; None: the plan as it is."""
    if ranker is None or plan.ranker is None:
        return plan
    if plan.ranker.lists != ranker.lists:
        raise ValueError(f"the fold's ranker re-ranks {ranker.lists}, the plan {plan.ranker.lists}")
    return replace(plan, ranker=ranker, decay=ranker.decay_or(default_decay))


def searcher(mem: Memory, tenant: str, rs: Recipe) -> Run:
    """`Run` over the store: the search's own iterative path (`iterative_messages` on the
    one-shot pipeline, the offline decider as the server builds it), every round's plan
    re-ranked by the given ranker."""
    store = mem.store.tenant(tenant)
    decider = OfflineDecider(lists_only=not rs.iterative.iterative_every_question)

    def run(p: Probe, budget: int, ranker: Ranker | None) -> tuple[list[str], int]:
        embedder = QueryMemo.of(mem.embedder)

        def one_shot(plan: Plan) -> tuple[list[Selected], dict[str, Row], set[tuple[str, str]]]:
            plan = with_ranker(plan, ranker, rs.expansion.neighbour_decay)
            return select_messages(store, message_lists(store, embedder, plan, mem.search_pool,
                                                        sparse=mem.sparse), plan)

        req = SearchRequest(query=p.query, owner=p.owner, method="iterative",
                            max_messages=budget, trace=True)
        selected, records, _, trace = iterative_messages(one_shot, req, rs, decider)
        return [s.id for s in selected if s.id in records], len(trace.rounds) if trace else 0

    return run


def main(mem: Memory, data: str, tenant: str | None = None,
         log: Callable[[str], None] = print, in_sample: bool = True, depth: int | None = None,
         preset: str | None = None) -> dict[str, Any]:
    """Seed (or read ``tenant``), collect the candidates of ``iterative``'s rounds (its base
    method with the PageRank list, as `iterative_search` sets it), fit a ranker per held-out
    conversation, search every question with its fold's ranker; with ``in_sample``, also with
    the shipped one. ``depth``: the candidates the fold's rankers re-rank (default `DEPTH` of
    the base method); ``preset``: the retrieval preset searched (default: the server's)."""
    rs = mem.recipe("iterative", preset)
    method = rs.iterative.iterative_base
    if method not in fitting.DEPTH:
        raise ValueError(f"no ranker is trained for iterative_base {method!r}")
    base = rs.rounds()
    depth = depth or fitting.DEPTH[method]
    with fitting.seeded(mem, data, tenant, log) as (name, probes):
        log(f"collecting {len(probes)} questions ({method}, graph list "
            f"{base.walk.graph_list}) ...")
        names, samples = fitting.collect(mem, name, probes, method, base)  # type: ignore[arg-type]
        log("fitting a ranker per held-out conversation ...")
        folds = fitting.fold_rankers(samples, names, depth)
        run = searcher(mem, name, rs)
        log("searching every question with its fold's ranker ...")
        out: dict[str, Any] = {
            "method": "iterative", "base": method, "lists": list(names), "depth": depth,
            "questions": len(probes), "decider": "offline",
            "fold_decays": {o: r.decay for o, r in folds.items()},
            "cross_validated": scores(probes, run, lambda p: folds[p.owner]),
            "base_cross_validated": fitting.scores(samples, lambda s: folds[s.owner]),
        }
        log(f"cross-validated: {_line(out['cross_validated'])}")
        if in_sample:
            log("searching every question with the shipped ranker ...")
            out["shipped_ranker"] = scores(probes, run, lambda p: None)
        return out


def _line(r: dict[str, Any]) -> str:
    return " / ".join(f"{r['recall'][str(b)]:.3f}" for b in BUDGETS)


def report(out: dict[str, Any]) -> str:
    line = _line
    rows = [f"iterative on {out['base']} ({', '.join(out['lists'])}), {out['questions']} "
            f"questions, recall @{'/'.join(map(str, BUDGETS))}",
            f"  cross-validated (leave one conversation out): {line(out['cross_validated'])}"
            f" ({out['cross_validated']['mean_rounds']:.2f} rounds)",
            f"  its base alone, cross-validated:              "
            f"{line(out['base_cross_validated'])}",
            f"  fold decays: {out['fold_decays']}"]
    if "shipped_ranker" in out:
        rows.append(f"  with the shipped ranker (trained on all):     "
                    f"{line(out['shipped_ranker'])}")
    return "\n".join(rows)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0
