"""Token accounting for LLM calls: one `Usage` record per call, kept in a thread-safe `UsageLedger`.

A *call* is one `LLMClient.complete_structured(...)`, however many HTTP attempts it took: tokens
are summed over the attempts (a malformed reply costs tokens too). The ledger keeps running totals
per operation for the life of the process and the most recent records (bounded, so a long-running
server does not grow without limit). A ``sink`` callback receives every record as it is made, for
the caller to persist (e.g. in Neo4j).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


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


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Sums over every call of one operation since the ledger was created (or reset)."""

    operation: str
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    latency_ms: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, usage: Usage) -> UsageTotals:
        return UsageTotals(
            operation=self.operation,
            calls=self.calls + 1,
            failures=self.failures + (0 if usage.ok else 1),
            prompt_tokens=self.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self.completion_tokens + usage.completion_tokens,
            attempts=self.attempts + usage.attempts,
            latency_ms=self.latency_ms + usage.latency_ms,
        )


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
        self._totals: dict[str, UsageTotals] = {}

    def record(self, usage: Usage) -> None:
        with self._lock:
            self._records.append(usage)
            current = self._totals.get(usage.operation) or UsageTotals(usage.operation)
            self._totals[usage.operation] = current.add(usage)
        if self._sink is not None:
            try:
                self._sink(usage)
            except Exception:
                log.exception("usage sink failed for operation %r", usage.operation)

    def records(self) -> list[Usage]:
        """The retained records, oldest first (a copy)."""
        with self._lock:
            return list(self._records)

    def totals(self) -> dict[str, UsageTotals]:
        """Per-operation sums, keyed by operation name (a copy)."""
        with self._lock:
            return dict(self._totals)

    def reset(self) -> None:
        with self._lock:
            self._records.clear()
            self._totals.clear()
