"""LLM usage in Neo4j: one `:LLMUsage` node per tenant, UTC day, operation and model, holding
running sums (calls, failures, tokens, attempts, latency). Written by the LLM client's sink
(`graphmem.llm.usage.tenant_sink`) as each call ends; extraction adds what became of each reply
(proposed, kept, dropped by reason: `record_extraction`); read back per tenant."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from graphmem.llm.usage import DROP_REASONS, Usage

if TYPE_CHECKING:
    from graphmem.store.connection import Row
    from graphmem.store.core import Store


class UsageStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    def record(self, tenant: str, usage: Usage, at: datetime | None = None) -> int:
        """Add one call to its day's row; returns the row's calls so far."""
        at = (at or datetime.now(UTC)).astimezone(UTC)
        rows = self._store.run(
            "queries/llm_usage/record", write=True, tenant=tenant, day=at.date(), at=at,
            operation=usage.operation, model=usage.model, prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens, attempts=usage.attempts,
            latency_ms=usage.latency_ms, ok=usage.ok,
        )
        return int(rows[0]["calls"])

    def record_extraction(self, tenant: str, operation: str, model: str,
                          summary: Mapping[str, Any], at: datetime | None = None) -> None:
        """Add one extraction's outcome (`ExtractionReport.summary`: proposed, kept, dropped
        by reason) to its day's row."""
        at = (at or datetime.now(UTC)).astimezone(UTC)
        dropped = summary.get("dropped", {})
        counts: dict[str, Any] = {f"dropped_{r}": int(dropped.get(r, 0)) for r in DROP_REASONS}
        self._store.run(
            "queries/llm_usage/record_extraction", write=True, tenant=tenant, day=at.date(),
            at=at, operation=operation, model=model, proposed=int(summary.get("proposed", 0)),
            kept=int(summary.get("kept", 0)),
            **counts,
        )

    def list(self, tenant: str, since: date | None = None, until: date | None = None) -> list[Row]:
        return self._store.run("queries/llm_usage/list", tenant=tenant, since=since, until=until)
