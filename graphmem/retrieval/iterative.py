"""Iterative retrieval, capped-core variant: recall, decide, follow-up queries, in bounded
rounds. Pure: the loop is driven by a ``recall(query) -> candidates`` callable and a `Decider`;
the pool (score = max over the queries that found a candidate), the reservations, the bounds
and the final assembly need no database and no model.

A round recalls each of its queries (the first round: the question alone) into the pool, where
every candidate is kept once by its identity (unit, id). The first hit of each follow-up query
that is not yet secured (in the core or reserved) is reserved. Then the decider reads the
question, the pool, the core and the queries issued so far, and answers which candidates to
keep (they join the core, which persists across rounds, up to its cap), which follow-up queries
to issue next (at most L), and whether the evidence is sufficient.

The loop stops when the decider says sufficient, asks no new query, has been called R times, or
p rounds in a row made no progress (no candidate joined the core or the pool's first K); when
the decider fails for good, the first f candidates of the pool become the core and the loop
stops. So at most R decider calls and 1 + (R - 1) * L recalls are made.

Assembly: the core (in the order it was kept), then the reservations (in the order they were
made), then the rest of the pool by score; deduplicated by identity, then truncated to K items
and to a token budget (the longest prefix that fits).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

Key = tuple[str, str]
"""A candidate's identity: (unit type, id), e.g. ``("message", "conv-26/D1:3")``."""


@dataclass(frozen=True)
class Candidate:
    """One recalled item, as one query's recall list gives it."""

    unit: str
    id: str
    score: float
    rank: int = 0
    """Its rank in that query's list, from 1."""
    lists: tuple[str, ...] = ()
    """The recall lists (rules) that found it."""
    text: str = ""
    speaker: str = ""
    timestamp: datetime | None = None
    session: str = ""
    tokens: int = 0
    """Its size for a token budget (the caller counts)."""

    @property
    def key(self) -> Key:
        return (self.unit, self.id)


@dataclass(frozen=True)
class Found:
    """A candidate in the pool: its best sighting, its score (the max over the queries that
    found it), those queries in order, and the round it first appeared in."""

    candidate: Candidate
    score: float
    queries: tuple[str, ...]
    round: int

    @property
    def key(self) -> Key:
        return self.candidate.key


@dataclass(frozen=True)
class Bounds:
    rounds: int = 3
    """R: at most this many decider calls (0: no decider, the first recall alone)."""
    queries: int = 3
    """L: at most this many follow-up queries per round."""
    patience: int = 1
    """p: stop after this many rounds in a row without progress."""
    fallback: int = 5
    """f: when the decider fails for good, the first f candidates of the pool form the core."""
    core: int = 5
    """The cap of the core (items)."""


@dataclass(frozen=True)
class Budget:
    items: int | None = None
    """K: at most this many items (None: no limit)."""
    tokens: int | None = None
    """At most this many tokens in all (None: no limit)."""


@dataclass(frozen=True)
class View:
    """What the decider is shown in one round."""

    question: str
    round: int
    issued: tuple[str, ...]
    """Every query recalled so far, the question first."""
    latest: Mapping[str, Sequence[Candidate]]
    """This round's queries and their candidates, best first."""
    pool: tuple[Found, ...]
    """Everything found so far, best score first."""
    core: tuple[Key, ...]
    reserved: tuple[Key, ...]
    core_room: int
    """How many more items the core takes."""
    max_queries: int
    """L: how many follow-up queries are used."""
    budget: Budget


@dataclass(frozen=True)
class Decision:
    keep: tuple[Key, ...] = ()
    queries: tuple[str, ...] = ()
    sufficient: bool = False
    reasons: Mapping[Key, str] = field(default_factory=dict)
    """Why each kept candidate was kept."""
    dropped: Mapping[Key, str] = field(default_factory=dict)
    """Candidates the decider looked at and left out, and why."""
    note: str = ""


class DeciderFailed(Exception):
    """The decider could not decide (e.g. the model's replies stayed malformed after retries)."""


class Decider(Protocol):
    name: str

    def decide(self, view: View) -> Decision: ...


@dataclass(frozen=True)
class QueryTrace:
    query: str
    candidates: tuple[Candidate, ...]
    reserved: Key | None
    ms: float


@dataclass(frozen=True)
class RoundTrace:
    round: int
    queries: tuple[QueryTrace, ...]
    decision: Decision | None
    kept: tuple[Key, ...]
    """What actually joined the core (the decider's keep, less unknown, repeated, over the cap)."""
    follow_ups: tuple[str, ...]
    progress: bool
    recall_ms: float
    decide_ms: float
    error: str = ""


@dataclass(frozen=True)
class Outcome:
    items: tuple[Found, ...]
    """The assembled result, in order."""
    core: tuple[Key, ...]
    reserved: tuple[Key, ...]
    rounds: tuple[RoundTrace, ...]
    stop: str
    """Why the loop ended: sufficient, no_queries, rounds, no_progress, decider_failed."""
    decider_calls: int
    recalls: int


class Pool:
    """Every candidate once, by identity; its score the max over the queries that found it."""

    def __init__(self) -> None:
        self._found: dict[Key, Found] = {}

    def add(self, query: str, round_: int, candidates: Iterable[Candidate]) -> None:
        for c in candidates:
            old = self._found.get(c.key)
            if old is None:
                self._found[c.key] = Found(c, c.score, (query,), round_)
                continue
            queries = old.queries if query in old.queries else (*old.queries, query)
            best = c if c.score > old.score else old.candidate
            self._found[c.key] = Found(best, max(old.score, c.score), queries, old.round)

    def __contains__(self, key: object) -> bool:
        return key in self._found

    def __len__(self) -> int:
        return len(self._found)

    def get(self, key: Key) -> Found | None:
        return self._found.get(key)

    def ranked(self) -> tuple[Found, ...]:
        """Best score first; ties: the earlier round, then the better rank, then the key."""
        return tuple(sorted(self._found.values(),
                            key=lambda f: (-f.score, f.round, f.candidate.rank, f.key)))


def assemble(core: Sequence[Key], reserved: Sequence[Key], ranked: Sequence[Found],
             budget: Budget) -> list[Found]:
    """The core, then the reservations, then the rest by score; each identity once (duplicates
    are dropped before truncation, so they never take budget), then the longest prefix within
    ``budget.items`` and ``budget.tokens``. Keys missing from ``ranked`` are skipped."""
    by_key = {f.key: f for f in ranked}
    ordered = [by_key[k] for k in dict.fromkeys([*core, *reserved, *(f.key for f in ranked)])
               if k in by_key]
    out: list[Found] = []
    spent = 0
    for f in ordered:
        if budget.items is not None and len(out) >= budget.items:
            break
        if budget.tokens is not None and spent + f.candidate.tokens > budget.tokens:
            break
        spent += f.candidate.tokens
        out.append(f)
    return out


def normalise_query(query: str) -> str:
    """How queries are compared for repeats: case and spacing ignored."""
    return " ".join(query.casefold().split())


def iterate(
    question: str,
    recall: Callable[[str], Sequence[Candidate]],
    decider: Decider | None,
    bounds: Bounds = Bounds(),
    budget: Budget = Budget(),
    recall_many: Callable[[Sequence[str]], Sequence[Sequence[Candidate]]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Outcome:
    """Run the loop (see the module docstring). ``recall_many``, when given, recalls one
    round's queries together (e.g. concurrently); it must answer one list per query, in order."""
    many = recall_many or (lambda qs: [recall(q) for q in qs])
    pool = Pool()
    core: list[Key] = []
    reserved: list[Key] = []
    issued: list[str] = []
    rounds: list[RoundTrace] = []
    queries = [question]
    calls = recalls = idle = 0
    stop = "rounds"
    for round_ in range(1, max(bounds.rounds, 1) + 1):
        before = {f.key for f in _top(pool.ranked(), budget)}
        t0 = clock()
        got = many(queries)
        recall_ms = (clock() - t0) * 1000
        recalls += len(queries)
        issued.extend(queries)
        traces: list[QueryTrace] = []
        for q, cands in zip(queries, got, strict=True):
            pool.add(q, round_, cands)
            first = None
            if round_ > 1:
                first = next((c.key for c in cands[:1]
                              if c.key not in core and c.key not in reserved), None)
                if first is not None:
                    reserved.append(first)
            traces.append(QueryTrace(q, tuple(cands), first, recall_ms / len(queries)))
        ranked = pool.ranked()
        entered = {f.key for f in _top(ranked, budget)} - before
        if bounds.rounds <= 0:
            rounds.append(RoundTrace(round_, tuple(traces), None, (), (), bool(entered),
                                     recall_ms, 0.0))
            break
        view = View(question, round_, tuple(issued), dict(zip(queries, got, strict=True)),
                    ranked, tuple(core), tuple(reserved), max(bounds.core - len(core), 0),
                    bounds.queries, budget)
        t1 = clock()
        calls += 1
        try:
            decision = decider.decide(view) if decider is not None else Decision()
        except DeciderFailed as exc:
            fallback = [f.key for f in ranked if f.key not in core][
                : max(bounds.fallback - len(core), 0)]
            core.extend(fallback)
            rounds.append(RoundTrace(round_, tuple(traces), None, tuple(fallback), (),
                                     bool(entered or fallback), recall_ms,
                                     (clock() - t1) * 1000, str(exc)))
            stop = "decider_failed"
            break
        decide_ms = (clock() - t1) * 1000
        kept: list[Key] = []
        for k in dict.fromkeys(decision.keep):
            if len(core) >= bounds.core:
                break
            if k in pool and k not in core:
                core.append(k)
                kept.append(k)
        progress = bool(kept or entered)
        idle = 0 if progress else idle + 1
        seen = {normalise_query(q) for q in issued}
        follow: list[str] = []
        for q in decision.queries:
            n = normalise_query(q)
            if n and n not in seen and len(follow) < bounds.queries:
                seen.add(n)
                follow.append(q.strip())
        last = calls >= bounds.rounds
        if decision.sufficient:
            stop = "sufficient"
        elif last:
            stop = "rounds"
        elif idle >= bounds.patience:
            stop = "no_progress"
        elif not follow:
            stop = "no_queries"
        else:
            stop = ""
        rounds.append(RoundTrace(round_, tuple(traces), decision, tuple(kept),
                                 tuple(follow) if not stop else (), progress, recall_ms,
                                 decide_ms))
        if stop:
            break
        queries = follow
    items = assemble(core, reserved, pool.ranked(), budget)
    return Outcome(tuple(items), tuple(core), tuple(reserved), tuple(rounds), stop or "rounds",
                   calls, recalls)


def _top(ranked: Sequence[Found], budget: Budget) -> Sequence[Found]:
    return ranked if budget.items is None else ranked[: budget.items]


__all__ = ["Bounds", "Budget", "Candidate", "Decider", "DeciderFailed", "Decision", "Found",
           "Outcome", "Pool", "View", "assemble", "iterate", "normalise_query"]
