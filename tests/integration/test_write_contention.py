"""Concurrent batches of one owner contend for the same nodes (its sessions, the entities every
turn mentions, its formation jobs). They queue for the locks in one order: all commit, and Neo4j
never has to break a deadlock (a broken one costs a retry with seconds of backoff, and once the
driver's retries run out the writer gets a 503)."""

from __future__ import annotations

import logging
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from graphmem.models import MessageIn
from graphmem.service import Memory
from graphmem.tenant_memory import TenantMemory
from tests.integration.helpers import msg, owner

NAMES = ["Porto", "Lisbon", "Melanie", "Caroline", "Google", "Paris", "Oscar", "Berlin"]
SESSIONS, TURNS = 3, 16


def _batches(who: str) -> list[list[dict[str, Any]]]:
    """Every turn names four of the same eight entities; sessions cut into batches of 1-3
    turns, shuffled across sessions."""
    rng = random.Random(3)
    out = []
    for s in range(SESSIONS):
        turns = []
        for i in range(TURNS):
            a, b, c, d = rng.sample(NAMES, 4)
            turns.append(msg(i, who, f"s{s}", text=f"{a} met {b} in {c}, then {d} at noon."))
        pos = 0
        while pos < len(turns):
            size = rng.randint(1, 3)
            out.append(turns[pos:pos + size])
            pos += size
    rng.shuffle(out)
    return out


def test_contending_batches_of_one_owner_commit_without_deadlocks(
        memory: Memory, tenant: str, caplog: pytest.LogCaptureFixture) -> None:
    who = owner()
    tm = TenantMemory(memory, tenant)

    def send(batch: list[dict[str, Any]]) -> int:
        return tm.messages.ingest([MessageIn.model_validate(m) for m in batch]).created

    with caplog.at_level(logging.WARNING, logger="neo4j"), ThreadPoolExecutor(6) as pool:
        assert sum(pool.map(send, _batches(who))) == SESSIONS * TURNS
    retried = [r.getMessage()[:300] for r in caplog.records if "DeadlockDetected" in r.getMessage()]
    assert not retried, retried
    for s in range(SESSIONS):  # every session chained in event-time order
        assert [m.id for m in tm.messages.session(f"s{s}", who)] == [
            f"{who}-s{s}-{i}" for i in range(TURNS)]
