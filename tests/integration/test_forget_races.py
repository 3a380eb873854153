"""Forgetting while formation runs: formation read a session (or a trace) before the forgetting
committed and writes after it. Nothing it writes may rest on what was forgotten: the episode
quoting a forgotten message is not written (the report says so, and the re-formation the
forgetting enqueued forms the rest), cases of a forgotten trace are not written; a forgotten
session gets no lock, episode or window again. And a session forgotten while batches keep
arriving leaves a consistent store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem.errors import NotFound
from graphmem.formation.run import FormationReport
from graphmem.models import MessageIn
from graphmem.procedural.models import TraceIn
from graphmem.service import Memory
from graphmem.store.episodes import EpisodeStore
from graphmem.store.procedural import ProceduralStore
from tests.integration.helpers import msg, owner
from tests.integration.test_procedural import run

SECRET = "quokkalantern"


def _session(memory: Memory, tenant: str) -> tuple[str, list[str]]:
    who = owner()
    texts = ["We planned the trip to Porto.", f"My locker code is {SECRET} 4711.",
             "Noted, I will remember it.", "Also book a hotel near the river."]
    batch = [MessageIn.model_validate(msg(i, who, text=x)) for i, x in enumerate(texts)]
    return who, memory.ops(tenant).ingest_messages(batch).ids


def _form_forgetting_first(memory: Memory, tenant: str, who: str,
                           monkeypatch: pytest.MonkeyPatch,
                           forget: Callable[[], object]) -> FormationReport:
    """Form session s1 of ``who`` with ``forget`` committing after formation read the session
    and before it writes its episodes."""
    real = EpisodeStore.write

    def forget_first(self: EpisodeStore, *args: Any) -> list[str]:
        forget()
        return real(self, *args)

    monkeypatch.setattr(EpisodeStore, "write", forget_first)
    report = memory.former.form(memory.stores(tenant), who, "s1")
    monkeypatch.undo()
    return report


def test_episode_write_skips_an_episode_whose_message_is_gone(
    memory: Memory, tenant: str, cypher: Any
) -> None:
    who, ids = _session(memory, tenant)
    memory.ops(tenant).forget_message(ids[1])
    store = EpisodeStore(memory.store, tenant)
    now = datetime.now(UTC)
    props = {"owner": who, "session_id": "s1", "title": "t", "narrative": SECRET}
    skipped = store.write(who, "s1", [
        {"id": "ep-stale", "props": props, "message_ids": ids[:3]},
        {"id": "ep-fine", "props": {**props, "narrative": "hotel"}, "message_ids": ids[3:]},
    ], now)
    assert skipped == ["ep-stale"]
    rows = cypher("MATCH (e:Episode {tenant: $t, owner: $o}) "
                  "RETURN e.id AS id, COUNT { (e)-[:DERIVED_FROM]->() } AS n", t=tenant, o=who)
    assert rows == [{"id": "ep-fine", "n": 1}]


def test_formation_racing_a_forget_writes_nothing_of_the_forgotten_message(
    memory: Memory, tenant: str, cypher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    who, ids = _session(memory, tenant)
    report = _form_forgetting_first(memory, tenant, who, monkeypatch,
                                    lambda: memory.ops(tenant).forget_message(ids[1]))
    assert report.skipped and report.created + report.extended == 0
    assert cypher("MATCH (n:Episode|Window|Sentence|Message {tenant: $t}) WHERE any(k IN "
                  "keys(n) WHERE n[k] IS :: STRING AND n[k] CONTAINS $s) RETURN labels(n) AS l",
                  t=tenant, s=SECRET) == []
    # the forgetting enqueued the session's formation again: it forms the rest
    jobs = cypher("MATCH (j:Job {tenant: $t, kind: 'form_session', state: 'pending'}) "
                  "WHERE j.payload_json CONTAINS $o RETURN count(j) AS n", t=tenant, o=who)
    assert jobs == [{"n": 1}]
    again = memory.former.form(memory.stores(tenant), who, "s1")
    assert again.skipped == [] and again.messages == 3
    formed = cypher("MATCH (:Episode {tenant: $t, owner: $o})-[:DERIVED_FROM]->(m) "
                    "RETURN m.id AS id ORDER BY id", t=tenant, o=who)
    assert [r["id"] for r in formed] == sorted([ids[0], *ids[2:]])


def _trace(memory: Memory, tenant: str) -> tuple[str, str]:
    who = owner()
    trace = TraceIn.model_validate(run(who, 1, "success", ["get_order", "cancel_order"]))
    [id_] = memory.procedural.ingest(memory.stores(tenant), [trace]).ids
    return who, id_


def _cases(cypher: Any, tenant: str, trace_id: str) -> int:
    rows = cypher("MATCH (c:Case {tenant: $t, trace_id: $id}) RETURN count(c) AS n",
                  t=tenant, id=trace_id)
    return int(rows[0]["n"])


def test_case_write_skips_a_forgotten_trace(memory: Memory, tenant: str, cypher: Any) -> None:
    who, trace_id = _trace(memory, tenant)
    memory.ops(tenant).forget_trace(trace_id)
    case = {"id": f"{trace_id}/c0", "step_ids": [f"{trace_id}#0"],
            "props": {"owner": who, "trace_id": trace_id, "intent": "cancel"}}
    store = ProceduralStore(memory.store, tenant)
    assert store.write_cases(who, trace_id, [case], datetime.now(UTC), jobs=True) is False
    assert _cases(cypher, tenant, trace_id) == 0
    assert cypher("MATCH (j:Job {tenant: $t, kind: 'form_skills', key: $o}) RETURN j",
                  t=tenant, o=who) == []


def test_form_trace_racing_a_forget_writes_no_case(
    memory: Memory, tenant: str, cypher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, trace_id = _trace(memory, tenant)
    real = ProceduralStore.write_cases

    def forget_first(self: ProceduralStore, *args: Any) -> bool:
        memory.ops(tenant).forget_trace(trace_id)  # commits after formation read the trace
        return real(self, *args)

    monkeypatch.setattr(ProceduralStore, "write_cases", forget_first)
    assert memory.procedural.form_trace(memory.stores(tenant), trace_id) == 0
    monkeypatch.undo()
    assert _cases(cypher, tenant, trace_id) == 0
    assert cypher("MATCH (n {tenant: $t}) WHERE n.trace_id = $id OR n.id STARTS WITH $id "
                  "RETURN labels(n) AS l", t=tenant, id=trace_id) == []
    # a trace still there is formed as before
    _, other = _trace(memory, tenant)
    assert memory.procedural.form_trace(memory.stores(tenant), other) >= 1
    assert _cases(cypher, tenant, other) >= 1


def test_formation_racing_a_session_forget_leaves_nothing_of_it(
    memory: Memory, tenant: str, cypher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    who, _ = _session(memory, tenant)
    report = _form_forgetting_first(memory, tenant, who, monkeypatch,
                                    lambda: memory.ops(tenant).forget_session(who, "s1"))
    assert report.created + report.extended == 0
    # not a node of the session is left: no episode, window or lock naming it (the record of
    # the formation job that ingest enqueued stays until done jobs are pruned)
    assert cypher("MATCH (n {tenant: $t}) WHERE NOT n:Job AND (n.owner = $o OR any(k IN "
                  "keys(n) WHERE n[k] IS :: STRING AND n[k] CONTAINS $s)) RETURN labels(n) AS l",
                  t=tenant, o=who, s=SECRET) == []


def test_forgetting_a_session_while_batches_arrive_leaves_a_consistent_store(
    memory: Memory, tenant: str, cypher: Any
) -> None:
    """Batches keep landing in two sessions of one owner (entities shared by all of them, the
    hubs both sides lock) while one session is forgotten again and again, and formed: whatever
    interleaves, every message has its session with the right count, every session one NEXT
    chain in time order, and no unit, window or episode outlives its messages."""
    who, stop = owner(), time.monotonic() + 8
    failures: list[str] = []
    t0 = datetime(2024, 1, 1, tzinfo=UTC)

    def ingest(worker: int) -> None:
        n = 0
        while time.monotonic() < stop:
            batch = [MessageIn(id=f"{who}-{worker}-{n}-{i}", owner=who,
                               session_id="s" if (n + i) % 2 else "t", speaker="ana",
                               text=f"Ingrid booked Paris, trip {n} item {i}.",
                               timestamp=t0 + timedelta(seconds=(n * 37 + i * 11) % 5000))
                     for i in range(10)]
            try:
                memory.ops(tenant).ingest_messages(batch)
            except Exception as exc:
                failures.append(f"ingest: {exc!r}")
            n += 1

    def forget_and_form() -> None:
        while time.monotonic() < stop:
            try:
                memory.ops(tenant).forget_session(who, "s")
            except NotFound:
                pass
            except Exception as exc:
                failures.append(f"forget: {exc!r}")
            try:
                memory.former.form(memory.stores(tenant), who, "t")
            except Exception as exc:
                failures.append(f"form: {exc!r}")

    threads = [threading.Thread(target=ingest, args=(w,)) for w in (1, 2)]
    threads.append(threading.Thread(target=forget_and_form))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []
    assert cypher("MATCH (m:Message {tenant: $t}) WHERE NOT EXISTS { MATCH (:Session {tenant: "
                  "$t, owner: m.owner, session_id: m.session_id}) } RETURN m.id", t=tenant) == []
    assert cypher("MATCH (s:Session {tenant: $t}) WHERE s.message_count <> COUNT { MATCH "
                  "(m:Message {tenant: $t, owner: s.owner, session_id: s.session_id}) } "
                  "RETURN s.session_id", t=tenant) == []
    for session in ("s", "t"):
        rows = cypher("MATCH (m:Message {tenant: $t, session_id: $s}) RETURN count(m) AS n, "
                      "sum(CASE WHEN NOT EXISTS { ()-[:NEXT]->(m) } THEN 1 ELSE 0 END) AS heads, "
                      "sum(COUNT { (m)-[:NEXT]->() }) AS links", t=tenant, s=session)[0]
        assert rows["heads"] == (1 if rows["n"] else 0) and rows["links"] == max(rows["n"] - 1, 0)
    assert cypher("MATCH (m:Message {tenant: $t})-[:NEXT]->(x) WHERE x.session_id <> m.session_id "
                  "OR x.timestamp < m.timestamp RETURN m.id", t=tenant) == []
    assert cypher("MATCH (x:Sentence {tenant: $t}) WHERE NOT (x)-[:PART_OF]->(:Message) "
                  "RETURN x.message_id", t=tenant) == []
    assert cypher("MATCH (w:Window {tenant: $t}) WHERE size(w.message_ids) <> COUNT "
                  "{ (w)-[:COVERS]->() } RETURN w.id", t=tenant) == []
    assert cypher("MATCH (e:Episode {tenant: $t}) WHERE NOT (e)-[:DERIVED_FROM]->() "
                  "RETURN e.id", t=tenant) == []
