"""Property-based: random sequences of fact writes (in and out of order, duplicates, concurrent)
keep the invariants of a fact chain, checked by the store and by the audit queries."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import audit
from graphmem.facts.models import ObservationIn
from graphmem.service import Memory

T0 = datetime(2026, 1, 1, tzinfo=UTC)
write = st.tuples(st.integers(0, 30), st.sampled_from(["A", "B", "C", "D"]))
INTEGRITY = ("integrity_two_current", "integrity_overlaps", "integrity_forward_supersedes",
             "integrity_missing_source")


def _obs(who: str, day: int, value: str, cardinality: str) -> ObservationIn:
    return ObservationIn(owner=who, subject="s", type=f"t-{cardinality}", content=value,
                         valid_from=T0 + timedelta(days=day), cardinality=cardinality)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=st.lists(write, min_size=1, max_size=8), concurrent=st.booleans(),
       cardinality=st.sampled_from(["single", "single", "multi"]))
def test_chain_invariants(memory: Memory, cypher: Any, writes: list[tuple[int, str]],
                          concurrent: bool, cardinality: str) -> None:
    tenant, who = f"prop-{uuid.uuid4().hex[:8]}", "p"
    items = [_obs(who, d, v, cardinality) for d, v in writes]
    if concurrent:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda o: memory.facts.observe(memory.stores(tenant), [o]), items))
    else:
        for o in items:
            memory.facts.observe(memory.stores(tenant), [o])
    facts = memory.facts.query(memory.stores(tenant), "observation", who, include_history=True)
    # nothing is ever deleted, and a write makes at most one node: a (day, value) written again
    # supports its node, unless another value replaced it in between (then it is a new node)
    assert len(facts) <= len(writes)
    model = _Model(cardinality == "multi")
    for day, value in writes:
        model.write(day, value)
    for day in sorted({-1} | {d for d, _ in writes} | {d + 1 for d, _ in writes}):
        t = T0 + timedelta(days=day, hours=12)
        valid = [f.content for f in memory.facts.query(memory.stores(tenant),
                                                       "observation", who, as_of=t)]
        assert len(set(valid)) == len(valid), (day, valid)
        if cardinality == "single":
            assert len(valid) <= 1, (day, valid)
        if not concurrent:  # with concurrent writers the order, hence the result, is open
            assert sorted(valid) == model.valid_at(day), (day, valid)
    created = cypher("MATCH (f:Fact {tenant: $t}) RETURN count(f) AS n", t=tenant)[0]["n"]
    assert created == len(facts)
    for name in INTEGRITY:
        assert audit.run(memory.store, tenant, name, {}) == [], name


class _Model:
    """An independent in-memory model of the documented semantics: a value equal to the one valid
    at its start adds support; another value closes the one valid at its start and runs until the
    next known start (single-valued), or until the next start of the same value (multi-valued)."""

    def __init__(self, multi: bool) -> None:
        self.multi = multi
        self.facts: list[list[Any]] = []  # [value, start, end or None]

    def _live(self) -> list[list[Any]]:
        return [f for f in self.facts if f[2] is None or f[1] < f[2]]

    def write(self, day: int, value: str) -> None:
        live = [f for f in self._live() if not self.multi or f[0] == value]
        covering = [f for f in live if f[1] <= day and (f[2] is None or day < f[2])]
        if covering and covering[0][0] == value:
            return
        later = [f[1] for f in live if f[1] > day]
        if covering and not self.multi:
            covering[0][2] = day
        self.facts.append([value, day, min(later) if later else None])

    def valid_at(self, day: int) -> list[str]:
        return sorted(f[0] for f in self._live() if f[1] <= day and (f[2] is None or day < f[2]))
