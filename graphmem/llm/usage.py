"""Token accounting for LLM calls: one `Usage` record per call, kept in a thread-safe `UsageLedger`.

A *call* is one `LLMClient.complete_structured(...)`, however many HTTP attempts it took: tokens
are summed over the attempts (a malformed reply costs tokens too). The ledger keeps running totals
per operation for the life of the process and the most recent records (bounded, so a long-running
server does not grow without limit). A ``sink`` callback receives every record as it is made, for
the caller to persist: `tenant_sink` attributes each record to the tenant whose work made the call
(set with `tenant_scope` around that work) and hands both to a writer (graphmem writes daily
totals into Neo4j: `graphmem.store.usage`).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)
DROP_REASONS = ("no_source", "ungrounded", "empty", "invalid")
"""Why fact extraction drops a proposal before writing it (`UsageSums.dropped` keys)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """What one LLM call cost. Token counts come from the API's ``usage`` field (0 if absent)."""

    operation: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    latency_ms: float
    ok: bool

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def sums(self) -> UsageSums:
        return UsageSums(calls=1, failures=0 if self.ok else 1, prompt_tokens=self.prompt_tokens,
                         completion_tokens=self.completion_tokens, attempts=self.attempts,
                         latency_ms=self.latency_ms)


class UsageSums(BaseModel):
    """Running sums over LLM calls."""

    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = Field(default=0, description="HTTP attempts, retries included")
    latency_ms: float = Field(default=0.0, description="summed over the calls")
    proposed: int = Field(default=0, description="extraction: facts and profile operations "
                          "the model proposed")
    kept: int = Field(default=0, description="extraction: proposals written")
    dropped: dict[str, int] = Field(default_factory=dict, description="extraction: proposals "
                                    "dropped before writing, by reason (no_source, ungrounded, "
                                    "empty, invalid)")

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: UsageSums) -> None:
        for k in UsageSums.model_fields:
            mine, theirs = getattr(self, k), getattr(other, k)
            if isinstance(mine, dict):
                setattr(self, k, {r: mine.get(r, 0) + theirs.get(r, 0)
                                  for r in dict.fromkeys([*mine, *theirs])})
            else:
                setattr(self, k, mine + theirs)


class UsageTotal(UsageSums):
    """One operation's calls: since the ledger was created, or over a report's days."""

    operation: str
    models: list[str] = Field(default_factory=list)

    def include(self, model: str, sums: UsageSums) -> None:
        if model not in self.models:
            self.models.append(model)
        self.add(sums)


UsageSink = Callable[[Usage], None]


class UsageLedger:
    """Thread-safe record of LLM usage.

    ``max_records`` bounds the list returned by `records()` (oldest dropped first; None keeps
    everything); `totals()` always covers every call. The ``sink`` is called outside the lock,
    in the calling thread; if it raises, the error is logged and the call's result still stands.
    """

    def __init__(self, sink: UsageSink | None = None, max_records: int | None = 10_000) -> None:
        self._sink = sink
        self._lock = threading.Lock()
        self._records: deque[Usage] = deque(maxlen=max_records)
        self._totals: dict[str, UsageTotal] = {}

    def record(self, usage: Usage) -> None:
        with self._lock:
            self._records.append(usage)
            total = self._totals.setdefault(usage.operation,
                                            UsageTotal(operation=usage.operation))
            total.include(usage.model, usage.sums())
        if self._sink is not None:
            try:
                self._sink(usage)
            except Exception:
                log.exception("usage sink failed for operation %r", usage.operation)

    def records(self) -> list[Usage]:
        """The retained records, oldest first (a copy)."""
        with self._lock:
            return list(self._records)

    def totals(self) -> dict[str, UsageTotal]:
        """Per-operation sums, keyed by operation name (copies)."""
        with self._lock:
            return {op: t.model_copy(deep=True) for op, t in self._totals.items()}

    def reset(self) -> None:
        with self._lock:
            self._records.clear()
            self._totals.clear()


_tenant: ContextVar[str | None] = ContextVar("graphmem_llm_tenant", default=None)


@contextmanager
def tenant_scope(tenant: str) -> Iterator[None]:
    """LLM calls made inside (in this thread or task) are the tenant's, for `tenant_sink`."""
    token = _tenant.set(tenant)
    try:
        yield
    finally:
        _tenant.reset(token)


def current_tenant() -> str | None:
    return _tenant.get()


def tenant_sink(write: Callable[[str, Usage], object]) -> UsageSink:
    """A sink that passes each record with the tenant of the enclosing `tenant_scope` to
    ``write``; a call made outside any scope is logged and not written (it has no owner)."""

    def sink(usage: Usage) -> None:
        tenant = _tenant.get()
        if tenant is None:
            log.warning("LLM call %r outside a tenant scope: usage not persisted",
                        usage.operation)
            return
        write(tenant, usage)

    return sink


class UsageDay(UsageSums):
    """One tenant's LLM calls of one UTC day, operation and model (as stored in Neo4j)."""

    day: date
    operation: str
    model: str


class UsageReport(BaseModel):
    """``days``: one row per UTC day, operation and model; ``totals``: sums per operation."""

    days: list[UsageDay]
    totals: dict[str, UsageTotal]

    @classmethod
    def of(cls, days: list[UsageDay]) -> UsageReport:
        totals: dict[str, UsageTotal] = {}
        for d in days:
            totals.setdefault(d.operation, UsageTotal(operation=d.operation)).include(d.model, d)
        return cls(days=days, totals=totals)
