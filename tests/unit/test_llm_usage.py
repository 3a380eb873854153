"""Attributing LLM calls to tenants (`tenant_scope`, `tenant_sink`) and summing a usage report."""

from __future__ import annotations

import threading
from datetime import date

from graphmem.llm.usage import (
    Usage,
    UsageDay,
    UsageReport,
    current_tenant,
    tenant_scope,
    tenant_sink,
)

CALL = Usage("extract_facts", "m", 10, 2, 1, 5.0, True)


def test_sink_writes_with_the_scope_tenant_and_skips_unscoped_calls() -> None:
    written: list[tuple[str, str]] = []
    sink = tenant_sink(lambda tenant, u: written.append((tenant, u.operation)))
    sink(CALL)  # outside any scope: not written
    with tenant_scope("t1"):
        sink(CALL)
        with tenant_scope("t2"):
            sink(CALL)
        sink(CALL)
    assert current_tenant() is None
    assert written == [("t1", "extract_facts"), ("t2", "extract_facts"), ("t1", "extract_facts")]


def test_scope_is_per_thread() -> None:
    seen: list[str | None] = []
    with tenant_scope("t1"):
        thread = threading.Thread(target=lambda: seen.append(current_tenant()))
        thread.start()
        thread.join()
    assert seen == [None]


def test_report_totals_per_operation() -> None:
    def day(d: int, op: str, model: str, calls: int) -> UsageDay:
        return UsageDay(day=date(2026, 3, d), operation=op, model=model, calls=calls,
                        failures=1, prompt_tokens=10 * calls, completion_tokens=calls,
                        attempts=calls + 1, latency_ms=2.5 * calls)

    report = UsageReport.of([day(1, "a", "m1", 2), day(2, "a", "m2", 3), day(2, "b", "m1", 1)])
    a = report.totals["a"]
    assert (a.calls, a.failures, a.prompt_tokens, a.completion_tokens, a.attempts) == (
        5, 2, 50, 5, 7)
    assert a.models == ["m1", "m2"] and a.latency_ms == 12.5
    assert report.totals["b"].calls == 1 and report.days[0].total_tokens == 22
    assert UsageReport.of([]).model_dump() == {"days": [], "totals": {}}
