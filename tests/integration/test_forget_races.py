"""Forgetting while formation runs: formation read a session (or a trace) before the forgetting
committed and writes after it. Nothing it writes may rest on what was forgotten: the episode
quoting a forgotten message is not written (the report says so, and the re-formation the
forgetting enqueued forms the rest), cases of a forgotten trace are not written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

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
    return who, memory.ingest(tenant, batch).ids


def test_episode_write_skips_an_episode_whose_message_is_gone(
    memory: Memory, tenant: str, cypher: Any
) -> None:
    who, ids = _session(memory, tenant)
    memory.forget_message(tenant, ids[1])
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
    real = EpisodeStore.write

    def forget_first(self: EpisodeStore, *args: Any) -> list[str]:
        memory.forget_message(tenant, ids[1])  # commits after formation read the session
        return real(self, *args)

    monkeypatch.setattr(EpisodeStore, "write", forget_first)
    report = memory.former.form(tenant, who, "s1")
    monkeypatch.undo()
    assert report.skipped and report.created + report.extended == 0
    assert cypher("MATCH (n:Episode|Window|Sentence|Message {tenant: $t}) WHERE any(k IN "
                  "keys(n) WHERE n[k] IS :: STRING AND n[k] CONTAINS $s) RETURN labels(n) AS l",
                  t=tenant, s=SECRET) == []
    # the forgetting enqueued the session's formation again: it forms the rest
    jobs = cypher("MATCH (j:Job {tenant: $t, kind: 'form_session', state: 'pending'}) "
                  "WHERE j.payload_json CONTAINS $o RETURN count(j) AS n", t=tenant, o=who)
    assert jobs == [{"n": 1}]
    again = memory.former.form(tenant, who, "s1")
    assert again.skipped == [] and again.messages == 3
    formed = cypher("MATCH (:Episode {tenant: $t, owner: $o})-[:DERIVED_FROM]->(m) "
                    "RETURN m.id AS id ORDER BY id", t=tenant, o=who)
    assert [r["id"] for r in formed] == sorted([ids[0], *ids[2:]])


def _trace(memory: Memory, tenant: str) -> tuple[str, str]:
    who = owner()
    trace = TraceIn.model_validate(run(who, 1, "success", ["get_order", "cancel_order"]))
    [id_] = memory.procedural.ingest(tenant, [trace]).ids
    return who, id_


def _cases(cypher: Any, tenant: str, trace_id: str) -> int:
    rows = cypher("MATCH (c:Case {tenant: $t, trace_id: $id}) RETURN count(c) AS n",
                  t=tenant, id=trace_id)
    return int(rows[0]["n"])


def test_case_write_skips_a_forgotten_trace(memory: Memory, tenant: str, cypher: Any) -> None:
    who, trace_id = _trace(memory, tenant)
    memory.forget_trace(tenant, trace_id)
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
        memory.forget_trace(tenant, trace_id)  # commits after formation read the trace
        return real(self, *args)

    monkeypatch.setattr(ProceduralStore, "write_cases", forget_first)
    assert memory.procedural.form_trace(tenant, trace_id) == 0
    monkeypatch.undo()
    assert _cases(cypher, tenant, trace_id) == 0
    assert cypher("MATCH (n {tenant: $t}) WHERE n.trace_id = $id OR n.id STARTS WITH $id "
                  "RETURN labels(n) AS l", t=tenant, id=trace_id) == []
    # a trace still there is formed as before
    _, other = _trace(memory, tenant)
    assert memory.procedural.form_trace(tenant, other) >= 1
    assert _cases(cypher, tenant, other) >= 1


def test_formation_racing_a_session_forget_leaves_nothing_of_it(
    memory: Memory, tenant: str, cypher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    who, _ = _session(memory, tenant)
    real = EpisodeStore.write

    def forget_first(self: EpisodeStore, *args: Any) -> list[str]:
        memory.forget_session(tenant, who, "s1")  # commits after formation read the session
        return real(self, *args)

    monkeypatch.setattr(EpisodeStore, "write", forget_first)
    report = memory.former.form(tenant, who, "s1")
    monkeypatch.undo()
    assert report.created + report.extended == 0
    # not a node of the session is left: no episode, window or lock naming it (the record of
    # the formation job that ingest enqueued stays until done jobs are pruned)
    assert cypher("MATCH (n {tenant: $t}) WHERE NOT n:Job AND (n.owner = $o OR any(k IN "
                  "keys(n) WHERE n[k] IS :: STRING AND n[k] CONTAINS $s)) RETURN labels(n) AS l",
                  t=tenant, o=who, s=SECRET) == []
