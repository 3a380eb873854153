"""What became of each LLM extraction is recorded, never silent (against `ScriptedOpenAIServer`,
an OpenAI-compatible TEST DOUBLE, and the real embedder and Neo4j): on the episode
(``extraction_status`` and counts), in formation's report (a job's result), in the tenant's
`GET /v1/usage` rows (proposed, kept, dropped by reason) and in the Prometheus drop counter; an
episode whose every proposal was dropped can be made extractable again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem import metrics
from graphmem.formation.llm_episodes import LLMFinder, LLMNarrator
from graphmem.formation.run import Former
from graphmem.jobs import JobQueue
from graphmem.llm.client import LLMClient, LLMSettings
from graphmem.llm.usage import tenant_sink
from graphmem.ops.worker import Worker
from graphmem.service import Memory
from graphmem.store.episodes import EpisodeStore
from graphmem.store.usage import UsageStore
from tests.integration.conftest import auth
from tests.integration.helpers import owner
from tests.integration.test_formation import BAKING, HIKING, ingest
from tests.support.scripted_openai import ScriptedOpenAIServer

COPIED = {"subject": "alice", "type": "plan", "content": "Alice plans to hike the Alta Via 1",
          "explicit": True, "sources": ["<message id>"]}
BAKED = {"subject": "alice", "type": "baking", "content": "Alice baked her first sourdough loaf",
         "explicit": True, "sources": ["m1"]}
CAR = {"subject": "alice", "type": "car", "content": "Alice owns a red sports car",
       "explicit": True, "sources": ["m1"]}


@pytest.fixture
def llm_former(memory: Memory, srv: ScriptedOpenAIServer) -> Iterator[Former]:
    settings = LLMSettings(base_url=srv.base_url, model="test-model", max_retries=0,
                           timeout_s=10.0)
    with LLMClient(settings, sink=tenant_sink(UsageStore(memory.store).record)) as client:
        yield Former(memory.store, memory.embedder, LLMFinder(client), LLMNarrator(client),
                     client, memory.facts)


def dropped(reason: str) -> float:
    return metrics.EXTRACTION_DROPPED.labels(reason)._value.get()


def extraction_props(cypher: Any, tenant: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = cypher(
        "MATCH (e:Episode {tenant: $t}) RETURN e.title AS title, "
        "e.extraction_status AS status, e.extraction_proposed AS proposed, "
        "e.extraction_kept AS kept, e.extraction_dropped AS dropped, "
        "e.extraction_report AS report, e.extracted_at IS NOT NULL AS done "
        "ORDER BY e.reported_at", t=tenant)
    return rows


def test_drops_are_recorded_and_all_dropped_can_be_retried(
        memory: Memory, tenant: str, cypher: Any, srv: ScriptedOpenAIServer,
        llm_former: Former) -> None:
    who = owner()
    ingest(memory, tenant, who, {0: HIKING[0], 1: HIKING[1], 10: BAKING[0], 11: BAKING[1]})
    no_source, ungrounded = dropped("no_source"), dropped("ungrounded")
    srv.reply_json({"boundaries": [2]})
    srv.reply_json({"title": "Planning a Dolomites hike", "narrative": "Alice plans a hike."})
    srv.reply_json({"title": "A first sourdough loaf", "narrative": "Alice baked a loaf."})
    # the hiking episode: the placeholder copied as every source; the baking one: one fact its
    # message states, one it does not (a real id cited for something it does not say)
    srv.reply_json({"facts": [COPIED, COPIED | {"type": "trip"}], "profile": []})
    srv.reply_json({"facts": [BAKED, CAR], "profile": []})

    report = llm_former.form(memory.stores(tenant), who, "s1")

    hike, bake = extraction_props(cypher, tenant)
    assert (hike["status"], hike["proposed"], hike["kept"], hike["dropped"]) == (
        "all_dropped", 2, 0, 2)
    assert (bake["status"], bake["proposed"], bake["kept"], bake["dropped"]) == (
        "partial", 2, 1, 1)
    assert json.loads(hike["report"])["dropped"]["no_source"] == 2
    assert json.loads(bake["report"])["dropped"]["ungrounded"] == 1
    assert [(e["status"], e["kept"], e["dropped"]) for e in report.extraction] == [
        ("all_dropped", 0, {"no_source": 2, "ungrounded": 0, "empty": 0, "invalid": 0}),
        ("partial", 1, {"no_source": 0, "ungrounded": 1, "empty": 0, "invalid": 0})]
    assert all(e["episode"] for e in report.extraction)
    assert cypher("MATCH (f:Observation {tenant: $t}) RETURN f.content AS c", t=tenant) == [
        {"c": BAKED["content"]}]
    assert (dropped("no_source") - no_source, dropped("ungrounded") - ungrounded) == (2, 1)
    (day,) = [d for d in memory.ops(tenant).llm_usage().days if d.operation == "extract_facts"]
    assert (day.calls, day.proposed, day.kept) == (2, 4, 1)
    assert day.dropped == {"no_source": 2, "ungrounded": 1, "empty": 0, "invalid": 0}
    total = memory.ops(tenant).llm_usage().totals["extract_facts"]
    assert (total.proposed, total.kept, total.dropped["no_source"]) == (4, 1, 2)

    # the all-dropped episode is made extractable again and re-extracted, alone
    (reset,), jobs = EpisodeStore(memory.store, tenant).reset_extraction("all_dropped", owner=who)
    assert jobs == []  # no max_attempts: nothing enqueued
    assert reset["owner"] == who and reset["session_id"] == "s1"
    asked = len(srv.requests)
    srv.reply_json({"facts": [COPIED | {"content": "Alice plans a hiking trip to the "
                                        "Dolomites", "sources": ["m1"]}], "profile": []})
    again = llm_former.form(memory.stores(tenant), who, "s1")
    assert len(srv.requests) == asked + 1
    assert [e["status"] for e in again.extraction] == ["ok"]
    assert [e["status"] for e in extraction_props(cypher, tenant)] == ["ok", "partial"]
    assert EpisodeStore(memory.store, tenant).reset_extraction("all_dropped") == ([], [])


def test_usage_api_shows_drops(memory: Memory, api: TestClient, cypher: Any) -> None:
    t = "tenant-a"  # the api fixture's key-a
    try:
        UsageStore(memory.store).record_extraction(
            t, "extract_facts", "m", {"proposed": 3, "kept": 1,
                                      "dropped": {"no_source": 1, "ungrounded": 1}})
        body = api.get("/v1/usage", headers=auth("key-a")).json()
        (row,) = [d for d in body["days"] if d["operation"] == "extract_facts"]
        assert (row["operation"], row["calls"], row["proposed"], row["kept"]) == (
            "extract_facts", 0, 3, 1)
        assert row["dropped"] == {"no_source": 1, "ungrounded": 1, "empty": 0, "invalid": 0}
        assert body["totals"]["extract_facts"]["dropped"]["ungrounded"] == 1
    finally:
        cypher("MATCH (u:LLMUsage {tenant: $t}) DELETE u", t=t)


def test_a_handler_result_is_the_jobs_result(memory: Memory, tenant: str) -> None:
    queue = JobQueue(memory.store)
    job_id = queue.enqueue(tenant, "report_test", "k1", {"n": 2})
    handlers = {"report_test": lambda _m, job: {"twice": job.payload["n"] * 2}}
    worker = Worker(memory, handlers, tenant=tenant, prune=False)
    assert worker.run_once()
    job = queue.get(tenant, job_id)
    assert (job.state, job.result) == ("done", {"twice": 4})


def test_retry_extraction_api_enqueues_one_formation_job_per_session(
        memory: Memory, api: TestClient, srv: ScriptedOpenAIServer, llm_former: Former,
        cypher: Any) -> None:
    t, who = "tenant-a", owner()  # the api fixture's key-a
    try:
        ingest(memory, t, who, {0: HIKING[0], 1: HIKING[1]})
        srv.reply_json({"boundaries": []})
        srv.reply_json({"title": "Planning a Dolomites hike", "narrative": "Alice plans a hike."})
        srv.reply_json({"facts": [COPIED], "profile": []})
        assert [e["status"] for e in llm_former.form(memory.stores(t),
                                                     who, "s1").extraction] == ["all_dropped"]

        res = api.post("/v1/episodes/retry-extraction", json={"owner": who},
                       headers=auth("key-a"))
        assert res.status_code == 202, res.text
        body = res.json()
        assert [(e["owner"], e["session_id"]) for e in body["episodes"]] == [(who, "s1")]
        (job_id,) = body["jobs"]
        job = api.get("/v1/jobs", params={"state": "pending"}, headers=auth("key-a")).json()
        (mine,) = [j for j in job["jobs"] if j["id"] == job_id]
        assert (mine["kind"], mine["payload"]) == ("form_session", {"owner": who,
                                                                    "session_id": "s1"})
        again = api.post("/v1/episodes/retry-extraction", json={"owner": who},
                         headers=auth("key-a")).json()
        assert again["jobs"] == [job_id]  # the pending job absorbs the second request

        bad = api.post("/v1/episodes/retry-extraction", json={"status": "bogus"},
                       headers=auth("key-a"))
        assert bad.status_code == 422 and "status" in bad.text
        other = api.post("/v1/episodes/retry-extraction", json={"owner": who},
                         headers=auth("key-b")).json()
        assert other == {"episodes": [], "jobs": []}  # another tenant sees nothing of it
    finally:
        memory.for_tenant(t).messages.forget_owner(who)
        cypher("MATCH (u:LLMUsage {tenant: $t}) DELETE u", t=t)  # other tests count tenant-a's
