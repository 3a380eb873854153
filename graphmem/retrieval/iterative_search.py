"""Method ``iterative`` over the store: each round's recall is one run of the one-shot pipeline
(`graphmem.retrieval.search`: recall lists, fusion, expansion, selection) with the recipe of its
rounds (`Recipe.rounds`: the base method ``iterative_base``, with the PageRank list unless
``iterative_graph_list`` is off), at the request's message budget K; the loop, the pool and
the assembly are `graphmem.retrieval.iterative`, the decisions `graphmem.retrieval.deciders`.
Also turns the loop's outcome into the reply's `SearchTrace`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import cast

from graphmem.models import (
    Method,
    SearchRequest,
    SearchTrace,
    TraceCandidate,
    TraceDecision,
    TraceQuery,
    TraceRound,
)
from graphmem.retrieval.context import estimate_tokens
from graphmem.retrieval.deciders import OfflineDecider
from graphmem.retrieval.expansion import Selected
from graphmem.retrieval.iterative import Bounds, Budget, Candidate, Decider, Outcome, iterate
from graphmem.retrieval.plan import Plan, resolve
from graphmem.retrieval.recipes import ITERATIVE_BASES, Recipe
from graphmem.store.core import Row

TRACE_CANDIDATES = 20
"""Candidates per query listed in a trace."""
BASES: frozenset[str] = ITERATIVE_BASES


OneShot = Callable[[Plan], tuple[list[Selected], dict[str, Row], set[tuple[str, str]]]]
"""One run of the one-shot pipeline for a plan: the selected messages, their records and the
NEXT links among them (`search.one_shot`)."""


def iterative_messages(
    one_shot: OneShot, req: SearchRequest, recipe: Recipe,
    decider: Decider | None = None,
) -> tuple[list[Selected], dict[str, Row], set[tuple[str, str]], SearchTrace | None]:
    """The messages method ``iterative`` selects (with their records and NEXT links, for
    `search.pack`) and, when the request asks for it, the trace. ``recipe``: the iterative
    recipe; its rounds run `Recipe.rounds`."""
    started = time.perf_counter()
    it = recipe.iterative
    rounds = recipe.rounds()
    now = datetime.now(UTC)
    base = req.model_copy(update={"method": cast(Method, it.iterative_base)})
    first_plan = resolve(base, rounds, now)
    records: dict[str, Row] = {}
    links: set[tuple[str, str]] = set()

    def recall(query: str) -> list[Candidate]:
        plan = (first_plan if query == req.query
                else resolve(base.model_copy(update={"query": query}), rounds, now))
        if budget_k is not None:
            plan = _with_budget(plan, budget_k)
        selected, rows, pairs = one_shot(plan)
        records.update(rows)
        links.update(pairs)
        follow_up = query != req.query
        weight = it.iterative_follow_up_weight if follow_up else 1.0
        found = [_candidate(s, rows[s.id], n, weight)
                 for n, s in enumerate((s for s in selected if s.id in rows), start=1)]
        return found[: it.iterative_follow_up_depth] if follow_up else found

    budget_k: int | None = first_plan.budget
    first = recall(req.query)
    if budget_k is None:
        budget_k = len(first)  # no budget: as many messages as the base method returns
    cached = {req.query: first}
    k = budget_k
    bounds = Bounds(rounds=it.iterative_rounds, queries=it.iterative_queries,
                    patience=it.iterative_patience, fallback=it.iterative_fallback,
                    core=max(1, int(k * it.iterative_core_share)))
    decider = decider or OfflineDecider()
    outcome = iterate(req.query, lambda q: cached.pop(q) if q in cached else recall(q),
                      decider, bounds, Budget(k, it.iterative_max_tokens))
    selected = [Selected(f.candidate.id, f.score, f.candidate.lists,
                         any(r != "neighbour" for r in f.candidate.lists))
                for f in outcome.items]
    trace = (to_trace(outcome, decider.name, it.iterative_base,
                      (time.perf_counter() - started) * 1000) if req.trace else None)
    return selected, records, links, trace


def _with_budget(plan: Plan, budget: int) -> Plan:
    return replace(plan, budget=budget) if plan.budget != budget else plan


def _candidate(s: Selected, row: Row, rank: int, weight: float) -> Candidate:
    text = str(row.get("text") or "")
    return Candidate("message", s.id, s.score * weight, rank, s.rules, text,
                     str(row.get("speaker") or ""), row.get("timestamp"),
                     str(row.get("session_id") or ""), estimate_tokens(text))


def to_trace(outcome: Outcome, decider: str, base: str, ms: float) -> SearchTrace:
    """The loop's outcome as the reply shows it."""
    rounds = []
    for r in outcome.rounds:
        decisions: list[TraceDecision] = []
        if r.decision is not None:
            decisions += [TraceDecision(unit=k[0], id=k[1], action="kept",
                                        reason=r.decision.reasons.get(k, "kept"))
                          for k in r.kept]
            decisions += [TraceDecision(unit=k[0], id=k[1], action="dropped", reason=why)
                          for k, why in r.decision.dropped.items() if k not in r.kept]
            decisions += [TraceDecision(unit=k[0], id=k[1], action="dropped",
                                        reason="not added: unknown, already kept or core full")
                          for k in r.decision.keep if k not in r.kept]
        else:
            decisions += [TraceDecision(unit=k[0], id=k[1], action="kept",
                                        reason="fallback: the decider failed")
                          for k in r.kept]
        rounds.append(TraceRound(
            round=r.round, queries=[_query(q.query, q.candidates, q.reserved, q.ms)
                                    for q in r.queries],
            decisions=decisions, follow_ups=list(r.follow_ups),
            sufficient=bool(r.decision and r.decision.sufficient),
            note=r.decision.note if r.decision else "", progress=r.progress, error=r.error,
            recall_ms=round(r.recall_ms, 2), decide_ms=round(r.decide_ms, 2)))
    return SearchTrace(decider=decider, base=base, rounds=rounds, stop=outcome.stop,
                       decider_calls=outcome.decider_calls, recalls=outcome.recalls,
                       core=[k[1] for k in outcome.core], reserved=[k[1] for k in outcome.reserved],
                       ms=round(ms, 2))


def _query(query: str, candidates: Sequence[Candidate], reserved: tuple[str, str] | None,
           ms: float) -> TraceQuery:
    return TraceQuery(query=query, reserved=reserved[1] if reserved else None, ms=round(ms, 2),
                      candidates=[TraceCandidate(unit=c.unit, id=c.id, rank=c.rank,
                                                 score=c.score, lists=list(c.lists))
                                  for c in candidates[:TRACE_CANDIDATES]])
