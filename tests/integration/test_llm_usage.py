"""LLM token accounting persisted in Neo4j: every call of formation is added to its tenant's
daily row as it ends (against the scripted OpenAI-compatible test double), concurrent calls lose
no update, and `GET /v1/usage` shows a tenant its own usage only."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from graphmem.config import Settings
from graphmem.formation.run import Former
from graphmem.llm.usage import Usage
from graphmem.models import MessageIn
from graphmem.service import Memory
from graphmem.store.usage import UsageStore
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner
from tests.support.scripted_openai import ScriptedOpenAIServer

TURNS = ["We hiked the Alta Via 1 last week.", "How long did it take?",
         "Six days, hut to hut, with one rest day in Cortina."]


def _call(op: str, ok: bool = True) -> Usage:
    return Usage(operation=op, model="m", prompt_tokens=3, completion_tokens=2, attempts=1,
                 latency_ms=1.5, ok=ok)


def test_concurrent_calls_lose_no_update(memory: Memory, tenant: str) -> None:
    store = UsageStore(memory.store)
    at = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: store.record(tenant, _call("op", ok=n % 4 != 0), at),
                      range(200)))
    store.record(tenant, _call("op"), at + timedelta(hours=1))  # the next UTC day
    report = memory.ops(tenant).llm_usage()
    assert [(d.day, d.calls, d.failures) for d in report.days] == [
        (date(2026, 3, 1), 200, 50), (date(2026, 3, 2), 1, 0)]
    day = report.days[0]
    assert (day.prompt_tokens, day.completion_tokens, day.attempts) == (600, 400, 200)
    assert abs(day.latency_ms - 300.0) < 1e-6
    total = report.totals["op"]
    assert (total.calls, total.failures, total.models) == (201, 50, ["m"])
    only = memory.ops(tenant).llm_usage(since=date(2026, 3, 2), until=date(2026, 3, 2))
    assert [d.day for d in only.days] == [date(2026, 3, 2)]


def test_formation_records_each_llm_call_for_its_tenant(
    settings: Settings, memory: Memory, tenant: str, srv: ScriptedOpenAIServer, api: TestClient,
    cypher: Any,
) -> None:
    llm = settings.model_copy(update={"llm_base_url": srv.base_url, "llm_model": "test-model",
                                      "llm_max_retries": 0})
    former = Former.for_settings(llm, memory.store, memory.embedder, memory.facts)
    who, t = owner(), "tenant-a"  # the api fixture's key-a
    memory.ops(t).ingest_messages([MessageIn.model_validate(msg(i, who, text=x))
                          for i, x in enumerate(TURNS)])
    srv.reply_json({"boundaries": []}, prompt_tokens=100, completion_tokens=5)
    srv.reply_json({"title": "Alta Via 1", "narrative": "They hiked the Alta Via 1."},
                   prompt_tokens=120, completion_tokens=20)
    srv.reply_json({"facts": [], "profile": []}, prompt_tokens=150, completion_tokens=8)
    try:
        assert former.form(memory.stores(t), who, "s1").created == 1
        assert (srv.pending, srv.unscripted) == (0, 0)
        body = api.get("/v1/usage", headers=auth("key-a")).json()
        today = datetime.now(UTC).date().isoformat()
        got = {d["operation"]: (d["day"], d["model"], d["calls"], d["prompt_tokens"],
                                d["completion_tokens"]) for d in body["days"]}
        assert got == {"episode_boundaries": (today, "test-model", 1, 100, 5),
                       "episode_narrative": (today, "test-model", 1, 120, 20),
                       "extract_facts": (today, "test-model", 1, 150, 8)}
        assert body["totals"]["extract_facts"]["calls"] == 1
        assert api.get("/v1/usage", headers=auth("key-b")).json() == {"days": [], "totals": {}}
        rows = cypher("MATCH (u:LLMUsage {tenant: $t}) RETURN count(u) AS n, "
                      "min(u.caption) AS caption", t=t)
        assert rows == [{"n": 3, "caption": f"episode_boundaries {today}"}]
    finally:
        memory.ops(t).delete_owner(who)
        cypher("MATCH (u:LLMUsage {tenant: $t}) DELETE u", t=t)


def test_usage_bad_range_is_a_problem(api: TestClient) -> None:
    r = api.get("/v1/usage", params={"since": "2026-03-02", "until": "2026-03-01"},
                headers=auth())
    assert r.status_code == 422 and "until" in r.text
    r = api.get("/v1/usage", params={"since": "yesterday"}, headers=auth())
    assert r.status_code == 422 and "since" in r.text
