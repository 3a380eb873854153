"""Training the learned re-ranking (`graphmem.retrieval.rerank`) on LoCoMo: every question's fused
candidates with their features and whether each is evidence, a logistic fit (L2, Newton's method,
numpy only), recall with and without the model through the same expansion the search runs, and
leave-one-conversation-out cross-validation, the estimate of what it does on conversations it
never saw. ``graphmem bench ranker`` writes the ranker the search then reads."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphmem.bench.units import evidence_recall
from graphmem.datasets import locomo
from graphmem.models import Method, SearchRequest
from graphmem.retrieval.expansion import select_heads
from graphmem.retrieval.fusion import Fused
from graphmem.retrieval.plan import reranked_lists, resolve
from graphmem.retrieval.recipes import Recipe
from graphmem.retrieval.rerank import (
    REACH,
    Ranker,
    embedder_key,
    feature_names,
    features,
    rerank,
)
from graphmem.retrieval.search import fused_candidates, message_lists
from graphmem.service import Memory

BUDGETS = (5, 10, 20, 50)
COLLECTED = 50
"""Fused candidates read per question for training (each with its features and label)."""
READ = REACH * max(BUDGETS)
"""Fused candidates whose windows and messages are read per question: all a ranker re-ranks at
the largest budget (`Ranker.reach`)."""
DEPTH: dict[str, int] = {"rrf_expand": 20, "rrf_windows": 50, "graph": 20}
"""Candidates the shipped rankers re-rank (or twice the budget, `Ranker.reach`). Through the
search on LoCoMo dev: `rrf_windows` 0.797 @10 at 50 against 0.783 at 20; `rrf_expand` 0.742 and
0.741, so the default method reads the messages of 20 candidates, not 50 (``graph``: the same)."""
DECAYS = (0.0, 0.05, 0.1, 0.2, 0.35)
"""The neighbour decays tried after re-ranking; the ranker keeps the one with the best held-out
recall (mean over `BUDGETS`). The probabilities spread far more than fused scores do: on LoCoMo
dev a neighbour of a clear hit is worth less than the next candidate the model trusts."""
L2 = 10.0
"""The penalty on the weights (scikit-learn's C = 0.1; 0.01 and 1 did no better)."""
Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Sample:
    """One question: its fused candidates, their features and evidence labels, and what
    expansion needs to turn a ranking into returned messages."""

    owner: str
    category: int
    gold: tuple[str, ...]
    query: str
    fused: list[Fused]
    rows: list[list[float]]
    labels: list[int]
    windows: dict[str, list[str]]
    decay: float
    lists: dict[str, Any]
    records: dict[str, dict[str, Any]]


def collect(mem: Memory, tenant: str, probes: Sequence[Any], method: Method,
            rs: Recipe, depth: int = COLLECTED) -> tuple[tuple[str, ...], list[Sample]]:
    """Each probe's candidates as the search finds them (without re-ranking): the features and
    labels of the first ``depth``, the windows and messages of the first `READ` (or ``depth``).
    Returns the recall lists' names and the samples."""
    store = mem.store.tenant(tenant)
    rs = rs.for_method(method).with_(rerank=False)
    names: tuple[str, ...] = ()
    out = []
    for p in probes:
        plan = resolve(SearchRequest(query=p.query, owner=p.owner, method=method,
                                     max_messages=max(BUDGETS)), rs, datetime.now(UTC))
        if plan.expand is None:
            raise ValueError(f"method {method} does not expand; nothing to re-rank")
        names = reranked_lists(plan.lists, plan.graph)
        recalled = message_lists(store, mem.embedder, plan, mem.search_pool, sparse=mem.sparse)
        fused, derived = fused_candidates(store, recalled, plan)
        lists = {**recalled, **derived}
        got = store.windows([f.id for f in fused[:max(depth, READ)]], *plan.expand)
        head = fused[:depth]
        gold = set(p.gold)
        out.append(Sample(p.owner, p.category, tuple(p.gold), p.query, fused,
                          features(p.query, head, lists, got.records, names),
                          [int(locomo.dia_id(f.id) in gold) for f in head], got.windows,
                          plan.decay, dict(lists), got.records))
    return names, out


def fit(rows: Matrix, labels: npt.NDArray[np.int_], l2: float = L2,
        steps: int = 50) -> tuple[Matrix, Matrix, Matrix, float]:
    """Logistic regression on standardised features, the intercept unpenalised: (mean, scale,
    coef, intercept)."""
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale == 0] = 1.0
    x = np.hstack([np.ones((len(rows), 1)), (rows - mean) / scale])
    y = labels.astype(np.float64)
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return mean, scale, w[1:], float(w[0])


def train(samples: Sequence[Sample], names: tuple[str, ...], depth: int = COLLECTED,
          l2: float = L2, about: str = "") -> Ranker:
    rows = np.array([r for s in samples for r in s.rows], dtype=np.float64)
    labels = np.array([y for s in samples for y in s.labels], dtype=np.int_)
    if rows.size == 0 or labels.min() == labels.max():
        raise ValueError("training needs candidates that are evidence and some that are not")
    mean, scale, coef, intercept = fit(rows, labels, l2)
    return Ranker(names, depth, tuple(map(float, mean)), tuple(map(float, scale)),
                  tuple(map(float, coef)), intercept, about)


def recall(sample: Sample, ranker: Ranker | None, budget: int) -> float:
    """Evidence recall at ``budget`` messages, the fused order re-ranked by ``ranker`` (None: as
    fused), expanded as the search expands (with the ranker's decay, if it has one)."""
    fused, decay = sample.fused, sample.decay
    if ranker is not None:
        fused = rerank(ranker, sample.query, fused, sample.lists, sample.records,
                       ranker.reach(budget))
        decay = ranker.decay_or(decay)
    chosen = select_heads(fused, sample.windows, budget, budget, decay)
    return evidence_recall(sample.gold, [c.id for c in chosen])


def scores(samples: Sequence[Sample],
           ranker_of: Callable[[Sample], Ranker | None]) -> dict[str, Any]:
    """Mean recall per budget, and per category at each budget."""
    out: dict[str, Any] = {"recall": {}, "recall_by_category": {}}
    for b in BUDGETS:
        got = [(s.category, recall(s, ranker_of(s), b)) for s in samples]
        out["recall"][str(b)] = _mean([r for _, r in got])
        for c in sorted({c for c, _ in got}):
            out["recall_by_category"].setdefault(str(c), {})[str(b)] = _mean(
                [r for k, r in got if k == c])
    return out


def cross_validate(samples: Sequence[Sample], names: tuple[str, ...], depth: int = COLLECTED,
                   l2: float = L2, decays: Sequence[float | None] = (None,),
                   ) -> dict[float | None, dict[str, Any]]:
    """Leave one conversation (owner) out: each owner's questions re-ranked by a model trained
    on the others', expanded with each of ``decays`` (None: the search's without a ranker)."""
    owners = sorted({s.owner for s in samples})
    models = {o: train([s for s in samples if s.owner != o], names, depth, l2) for o in owners}

    def held_out(decay: float | None) -> Callable[[Sample], Ranker]:
        return lambda s: replace(models[s.owner], decay=decay)

    return {d: scores(samples, held_out(d)) for d in decays}


def fold_rankers(samples: Sequence[Sample], names: tuple[str, ...], depth: int = COLLECTED,
                 l2: float = L2, decays: Sequence[float | None] = DECAYS) -> dict[str, Ranker]:
    """For each conversation (owner), the ranker fitted without it, as `main` fits the shipped
    one on all of them: trained on the other conversations' questions, its decay chosen by
    leave-one-conversation-out recall within those others (nested: the held-out conversation
    decides nothing)."""
    out = {}
    for owner in sorted({s.owner for s in samples}):
        rest = [s for s in samples if s.owner != owner]
        inner = {s.owner for s in rest}
        decay = best_decay(cross_validate(rest, names, depth, l2, decays)) if len(inner) > 1 \
            else None
        out[owner] = replace(train(rest, names, depth, l2), decay=decay)
    return out


def best_decay(by_decay: dict[float | None, dict[str, Any]]) -> float | None:
    """The decay of the best mean recall over the budgets (the first of equals)."""
    return max(by_decay, key=lambda d: _mean(list(by_decay[d]["recall"].values())))


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def about(method: str, data: str, cv: dict[str, Any], base: dict[str, Any],
          questions: int, depth: int, lists: Sequence[str] = (),
          decay: float | None = None) -> str:
    def line(r: dict[str, Any]) -> str:
        return " / ".join(f"{r['recall'][str(b)]:.3f}" for b in BUDGETS)

    over = f" (lists {', '.join(lists)})" if lists else ""
    spread = f", neighbour decay {decay}" if decay is not None else ""
    return (f"{method}{over}, re-ranking the first {depth} candidates (or twice the budget)"
            f"{spread}: "
            f"trained on {Path(data).name} ({questions} questions, categories 1-4); recall @"
            f"{'/'.join(map(str, BUDGETS))} messages without re-ranking {line(base)}, "
            f"leave-one-conversation-out {line(cv)}")


@contextmanager
def seeded(mem: Memory, data: str, tenant: str | None = None,
           log: Callable[[str], None] = print) -> Iterator[tuple[str, list[Any]]]:
    """The tenant holding the LoCoMo file and its questions: ``tenant`` as it is (it already
    holds the file, ingested and formed), else a throwaway one seeded (ingest and formation) and
    emptied on exit."""
    from graphmem.bench.formation import form_all
    from graphmem.bench.locomo import ingest_all, probes_of

    convs = locomo.load(data)
    probes, _ = probes_of(convs)
    owners: list[str] = []
    name = tenant or "ranker-" + secrets.token_hex(6)
    try:
        if tenant is None:
            log("ingesting and forming ...")
            ingest_all(mem, name, convs, owners)
            form_all(mem, name, convs)
        yield name, probes
    finally:
        for owner in owners:
            mem.for_tenant(name).messages.forget_owner(owner)


def main(mem: Memory, data: str, method: Method, tenant: str | None = None,
         log: Callable[[str], None] = print, depth: int | None = None,
         preset: str | None = None) -> tuple[Ranker, dict[str, Any]]:
    """Seed a throwaway tenant with the LoCoMo file (ingest and formation; or read ``tenant``,
    which already holds it), collect, cross-validate, train on every question. ``depth``: the
    candidates the ranker re-ranks (default `DEPTH` of the method). ``preset``: the retrieval
    preset the search runs (``deep``: with the PageRank list). Returns the ranker and the
    figures."""
    with seeded(mem, data, tenant, log) as (name, probes):
        log(f"collecting {len(probes)} questions ({method}) ...")
        names, samples = collect(mem, name, probes, method, mem.recipe(method, preset))
        return fitted(mem, data, method, names, samples, depth, log)


def fitted(mem: Memory, data: str, method: Method, names: tuple[str, ...],
           samples: Sequence[Sample], depth: int | None = None,
           log: Callable[[str], None] = print) -> tuple[Ranker, dict[str, Any]]:
    """Cross-validate and train on every question (see `main`)."""
    if not samples:
        raise ValueError(f"no question of {data} to train on")
    base = scores(samples, lambda s: None)
    log("cross-validating ...")
    depth = depth or DEPTH.get(method, COLLECTED)
    by_decay = cross_validate(samples, names, depth, decays=DECAYS)
    decay = best_decay(by_decay)
    cv = by_decay[decay]
    text = about(method, data, cv, base, len(samples), depth, names, decay)
    ranker = replace(train(samples, names, depth, about=text), embedder=embedder_key(
        mem.settings.embedder, mem.settings.embedding_unit), decay=decay)
    return ranker, {"method": method, "lists": list(names), "depth": depth, "decay": decay,
                    "features": list(feature_names(names)), "questions": len(samples),
                    "fused": base, "cross_validated": cv,
                    "cross_validated_by_decay": {str(d): r["recall"]
                                                 for d, r in by_decay.items()},
                    "in_sample": scores(samples, lambda s: ranker)}
