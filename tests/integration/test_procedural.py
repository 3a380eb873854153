"""Procedural memory on the real Neo4j: traces in over HTTP, formation through the job handlers,
skills and cases out, revision with supersession, outcomes later, tenant isolation, forgetting."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from graphmem.config import Settings
from graphmem.jobs import JobQueue
from graphmem.ops.worker import Worker
from graphmem.procedural.models import SkillSearch, TraceIn
from graphmem.service import Memory
from graphmem.store import Store
from graphmem.store.procedural import FORM_SKILLS, FORM_TRACE

from .conftest import auth
from .helpers import owner as new_owner
from .job_handlers import wait_for


def call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def run(owner: str, n: int, outcome: str, tools: list[str], text: str = "",
        **kw: Any) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an order agent."},
        {"role": "user", "content": text or "Please cancel my last order, I am user u_7"}]
    for i, tool in enumerate(tools):
        cid = f"c{n}-{i}"
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [call(tool, {"order_id": f"#{n}", "user_id": "u"}, cid)]})
        messages.append({"role": "tool", "tool_call_id": cid, "name": tool, "content": "{}"})
    messages.append({"role": "assistant", "content": "Done."})
    return {"owner": owner, "started_at": f"2024-05-{10 + n:02d}T12:00:00+02:00",
            "messages": messages, "outcome": outcome, "conditions": {"model": "m1"}, **kw}


def drain(memory: Memory, tenant: str) -> None:
    worker = Worker(memory, tenant=tenant, poll_s=0.05, lease_s=30, prune=False)
    while worker.run_once():
        pass


def test_traces_to_skills_revision_and_reads(api: TestClient, memory: Memory) -> None:
    o = new_owner()
    good = ["get_order", "cancel_order"]
    batch = [run(o, 1, "success", good), run(o, 2, "success", good),
             run(o, 3, "failure", ["get_order", "refund_order"])]
    r = api.post("/v1/traces", json={"traces": batch}, headers=auth())
    assert r.status_code == 201, r.text
    assert r.json()["created"] == 3
    again = api.post("/v1/traces", json=batch[0], headers=auth())  # a retry: stored once
    assert again.status_code == 201 and again.json() == {
        "ids": [r.json()["ids"][0]], "created": 0, "duplicates": 1}
    drain(memory, "tenant-a")

    found = api.post("/v1/skills/search", json={"query": "cancel my order", "owner": o},
                     headers=auth()).json()
    assert len(found["skills"]) == 1
    skill = found["skills"][0]
    assert [s["tool"] for s in skill["steps"]] == good
    assert skill["steps"][1]["writes"] and skill["steps"][1]["keys"] == ["order_id", "user_id"]
    assert (skill["successes"], skill["failures"], skill["version"]) == (2, 1, 1)
    assert skill["cases"] and all(c["outcome"] == "success" for c in skill["cases"])
    assert "refund_order" in skill["pitfalls"][0]

    detail = api.get(f"/v1/skills/{skill['id']}", headers=auth()).json()
    assert len(detail["supporting"]) == 2 and len(detail["contradicting"]) == 1
    case = api.get(f"/v1/cases/{detail['supporting'][0]['id']}", headers=auth()).json()
    assert case["case"]["skill"] == skill["id"]
    assert [s["kind"] for s in case["steps"]][:3] == ["system", "user", "tool_call"]
    cases = api.post("/v1/skills/search", json={"query": "cancel order", "owner": o,
                                                "units": "cases"}, headers=auth()).json()
    assert cases["cases"] and cases["cases"][0]["skill"] == skill["id"]

    # more executions that take another path: a new version supersedes the old one
    newer = [run(o, n, "success", ["get_order", "check_policy", "cancel_order"])
             for n in (4, 5, 6, 7)]
    assert api.post("/v1/traces", json={"traces": newer}, headers=auth()).status_code == 201
    drain(memory, "tenant-a")
    hist = api.get(f"/v1/skills/{skill['id']}/history", headers=auth()).json()
    assert [s["version"] for s in hist["skills"]] == [1, 2]
    assert hist["skills"][0]["invalidated_at"] is not None
    sup = hist["supersessions"][0]
    assert sup["of"] == skill["id"] and sup["reason"].startswith("steps changed: added")
    assert sup["sources"]
    now = api.post("/v1/skills/search", json={"query": "cancel my order", "owner": o},
                   headers=auth()).json()["skills"][0]
    assert now["version"] == 2 and now["successes"] == 6
    then = api.post("/v1/skills/search", json={"query": "cancel my order", "owner": o,
                                               "as_of": "2024-05-13T00:00:00Z"},
                    headers=auth()).json()["skills"]
    assert [s["version"] for s in then] == [1]

    # bitemporal: as_of (valid time) and known_at (recorded time) on reads and search
    v1, v2 = hist["skills"]
    between = v2["recorded_at"]  # v2 recorded (and v1 closed) then; just before: v1 current
    before = api.get(f"/v1/skills/{v2['id']}", params={"known_at": v1["recorded_at"]},
                     headers=auth()).json()
    assert before["skill"]["id"] == v1["id"] and before["skill"]["version"] == 1
    assert api.get(f"/v1/skills/{v2['id']}", params={"as_of": "2024-05-13T00:00:00Z"},
                   headers=auth()).json()["skill"]["id"] == v1["id"]
    assert api.get(f"/v1/skills/{v1['id']}", params={"as_of": "2024-05-20T00:00:00Z"},
                   headers=auth()).json()["skill"]["id"] == v2["id"]
    assert api.get(f"/v1/skills/{v1['id']}", params={"as_of": "2024-05-01T00:00:00Z"},
                   headers=auth()).status_code == 404  # no version valid yet
    assert api.get(f"/v1/skills/{v1['id']}", params={"as_of": "2024-05-13"},
                   headers=auth()).status_code == 422  # no offset: the field is named
    known = api.post("/v1/skills/search", json={"query": "cancel my order", "owner": o,
                                                "known_at": v1["recorded_at"]},
                     headers=auth()).json()["skills"]
    assert [s["id"] for s in known] == [v1["id"]]  # as recorded then: v1, open-ended
    late = api.post("/v1/skills/search", json={"query": "cancel my order", "owner": o,
                                               "known_at": between,
                                               "as_of": "2024-05-13T00:00:00Z"},
                    headers=auth()).json()["skills"]
    assert [s["id"] for s in late] == [v1["id"]]

    # an outcome recorded later changes the support, not the history
    tid = r.json()["ids"][0]
    out = api.post(f"/v1/traces/{tid}/outcome", json={"outcome": "failure"}, headers=auth())
    assert out.status_code == 200 and out.json()["previous"] == "success"
    drain(memory, "tenant-a")
    after = api.get(f"/v1/skills/{now['id']}", headers=auth()).json()["skill"]
    assert (after["successes"], after["failures"]) == (5, 2)
    rows = memory.store.run("audit/skill_integrity", tenant="tenant-a")
    assert rows == []
    gone = api.delete(f"/v1/owners/{o}", headers=auth()).json()
    assert gone["procedural"] > 0
    assert api.get(f"/v1/skills/{now['id']}", headers=auth()).status_code == 404


def shaped(owner: str, n: int, shape: str) -> dict[str, Any]:
    """A successful get_order -> cancel_order run as Anthropic, OpenAI Responses or Gemini
    clients write it."""
    ask, args = "Please cancel my last order, I am user u_7", {"order_id": f"#{n}", "user_id": "u"}
    messages: list[dict[str, Any]]
    if shape == "anthropic":
        messages = [{"role": "user", "content": ask}]
        for i, tool in enumerate(["get_order", "cancel_order"]):
            messages += [
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": f"toolu_{i}", "name": tool, "input": args}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "{}"}]}]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    elif shape == "responses":
        messages = [{"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": ask}]}]
        for i, tool in enumerate(["get_order", "cancel_order"]):
            messages += [{"type": "function_call", "call_id": f"call_{i}", "name": tool,
                          "arguments": json.dumps(args)},
                         {"type": "function_call_output", "call_id": f"call_{i}", "output": "{}"}]
        messages.append({"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": "Done."}]})
    else:
        messages = [{"role": "user", "parts": [{"text": ask}]}]
        for tool in ["get_order", "cancel_order"]:
            call_ = {"functionCall": {"name": tool, "args": args}}
            result = {"functionResponse": {"name": tool, "response": {}}}
            messages += [{"role": "model", "parts": [call_]}, {"role": "user", "parts": [result]}]
        messages.append({"role": "model", "parts": [{"text": "Done."}]})
    system = {"anthropic": "You are an order agent.",
              "gemini": {"parts": [{"text": "You are an order agent."}]}}.get(shape)
    return {"owner": owner, "started_at": f"2024-05-{10 + n:02d}T12:00:00+02:00",
            "messages": messages, "outcome": "success",
            **({"system": system} if system else {})}


def test_anthropic_responses_and_gemini_runs_form_one_skill(api: TestClient,
                                                            memory: Memory) -> None:
    o = new_owner()
    batch = [shaped(o, n, shape) for n, shape in enumerate(["anthropic", "responses", "gemini"])]
    r = api.post("/v1/traces", json={"traces": batch}, headers=auth())
    assert r.status_code == 201, r.text
    drain(memory, "tenant-a")
    skills = api.post("/v1/skills/search", json={"query": "cancel my order", "owner": o},
                      headers=auth()).json()["skills"]
    assert len(skills) == 1 and skills[0]["successes"] == 3
    assert [s["tool"] for s in skills[0]["steps"]] == ["get_order", "cancel_order"]
    assert skills[0]["steps"][1]["writes"] and skills[0]["steps"][1]["keys"] == ["order_id",
                                                                                 "user_id"]
    detail = api.get(f"/v1/skills/{skills[0]['id']}", headers=auth()).json()
    assert len(detail["supporting"]) == 3
    systems = 0
    for c in detail["supporting"]:  # each run: one user turn, two calls with their results
        kinds = [s["kind"] for s in api.get(f"/v1/cases/{c['id']}", headers=auth()).json()["steps"]]
        systems += kinds[0] == "system"  # a system prompt sent apart (Anthropic, Gemini)
        assert kinds[kinds[0] == "system":] == ["user", "tool_call", "tool_result", "tool_call",
                                               "tool_result", "assistant"]
    assert systems == 2
    bad = {**batch[0], "messages": [{"type": "function_call", "arguments": "{}"}]}
    res = api.post("/v1/traces", json=bad, headers=auth())
    assert res.status_code == 422 and res.json()["field"] == "traces[0].messages[0].name"
    api.delete(f"/v1/owners/{o}", headers=auth())


def test_context_brings_the_best_skill_with_its_cases(api: TestClient, memory: Memory) -> None:
    o = new_owner()
    good = ["get_order", "cancel_order"]
    batch = [run(o, 1, "success", good), run(o, 2, "success", good),
             run(o, 3, "failure", ["get_order", "refund_order"])]
    assert api.post("/v1/traces", json={"traces": batch}, headers=auth()).status_code == 201
    drain(memory, "tenant-a")
    ask = {"query": "Please cancel my last order", "owner": o, "units": ["skill", "message"],
           "trace": True}
    res = api.post("/v1/context", json=ask, headers=auth())
    assert res.status_code == 200, res.text
    out = res.json()
    first = out["items"][0]
    assert (first["unit"], first["evidence"], first["title"]) == ("skill", "e1", "cancel_order")
    assert ("get_order(order_id: order id, user_id: user id) -> cancel_order(order_id: order id, "
            "user_id: user id)*") in first["text"]
    assert "refund_order" in first["text"]  # the pitfall the failed run taught
    detail = api.get(f"/v1/skills/{first['id']}", headers=auth()).json()
    assert sorted(first["sources"]) == sorted(c["id"] for c in detail["supporting"])
    assert out["context"].startswith("## skill learned from earlier runs\n[e1] cancel_order\n")
    assert {"unit": "skill", "method": "rrf", "found": 1} in out["trace"]["searches"]
    before = api.post("/v1/context", json={**ask, "as_of": "2024-05-01T00:00:00Z"},
                      headers=auth()).json()
    assert all(i["unit"] != "skill" for i in before["items"])  # no skill valid yet
    plain = api.post("/v1/context", json={"query": ask["query"], "owner": o},
                     headers=auth()).json()
    assert all(i["unit"] != "skill" for i in plain["items"])  # only when asked for
    other = api.post("/v1/context", json=ask, headers=auth("key-b")).json()
    assert other["items"] == []  # another tenant: nothing
    bad = api.post("/v1/context", json={**ask, "units": ["skills"]}, headers=auth())
    assert bad.status_code == 422 and bad.json()["field"] == "units[0]"
    api.delete(f"/v1/owners/{o}", headers=auth())


def order_run(owner: str, n: int, outcome: str, path: list[str],
              ask: str = "Please cancel my order") -> dict[str, Any]:
    """A run of an order agent for customer n: ``path`` tools, each passed the customer's own
    order id and user id (so a look-up before the write checks the very order it changes)."""
    order, user = f"ORD-{1000 + n}", f"user_{n:03d}"
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"{ask}, I am {user}"}]
    for i, tool in enumerate(path):
        cid = f"o{n}-{i}"
        args = {"order_id": order, "user_id": user}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call(tool, args, cid)]},
                     {"role": "tool", "tool_call_id": cid, "content": json.dumps(
                         {"order_id": order, "status": "ok"})}]
    messages.append({"role": "assistant", "content": "Done."})
    return {"owner": owner, "started_at": f"2024-06-{n:02d}T12:00:00+00:00",
            "messages": messages, "outcome": outcome}


def test_a_skill_is_a_method_with_preconditions_and_counter_evidence_across_versions(
        api: TestClient, memory: Memory) -> None:
    """Runs of different customers give one skill with slots instead of their values, the check
    its successful runs made before writing, and what its failed runs did differently, with
    counts; later runs that take another path revise it (v2 SUPERSEDES v1), and the
    counter-evidence stays."""
    o = new_owner()
    good = ["get_order", "cancel_order"]
    batch = [order_run(o, 1, "success", good), order_run(o, 2, "success", good),
             order_run(o, 3, "success", good),
             order_run(o, 4, "failure", ["cancel_order"]),  # skipped the look-up
             order_run(o, 5, "failure", ["get_order", "refund_order"])]  # did something else
    assert api.post("/v1/traces", json={"traces": batch}, headers=auth()).status_code == 201
    drain(memory, "tenant-a")
    found = api.post("/v1/skills/search", json={"query": "I want to cancel an order",
                                                "owner": o}, headers=auth()).json()["skills"]
    assert [s["name"] for s in found] == ["cancel_order"]
    v1 = found[0]
    assert v1["steps"][1]["slots"] == {"order_id": "order id", "user_id": "user id"}
    assert "ORD-1001" not in json.dumps(v1["steps"]) and "user_001" not in v1["text"]
    assert [(c["before"], c["read"], c["same"], c["support"], c["of"])
            for c in v1["preconditions"]] == [
        ("cancel_order", "get_order", ["order id", "user id"], 3, 3)]
    counts = {c["kind"]: (c["count"], c["of"]) for c in v1["counter_evidence"]}
    assert counts["skipped_check"] == (1, 2) and counts["extra_write"] == (1, 2)
    assert (v1["successes"], v1["failures"]) == (3, 2)
    why = v1["why"]
    assert why["similarity"] > 0.5 and why["words"] == ["cancel", "order"]
    assert why["ranks"]["action"] == 1 and {c["outcome"] for c in why["cases"]} == {"success"}
    assert all(c["similarity"] is not None for c in why["cases"])
    assert "before cancel_order: get_order on the same order id, user id (3 of 3)" in v1["text"]

    ctx = api.post("/v1/context", json={"query": "cancel my order", "owner": o,
                                        "units": ["skill"]}, headers=auth()).json()
    assert "before cancel_order: get_order on the same order id" in ctx["context"]
    assert "1 of 2 called cancel_order without calling get_order before it" in ctx["context"]

    newer = [order_run(o, n, "success", ["get_order", "check_policy", "cancel_order"])
             for n in (6, 7, 8, 9)]
    assert api.post("/v1/traces", json={"traces": newer}, headers=auth()).status_code == 201
    drain(memory, "tenant-a")
    hist = api.get(f"/v1/skills/{v1['id']}/history", headers=auth()).json()
    assert [s["version"] for s in hist["skills"]] == [1, 2]
    assert hist["supersessions"][0]["of"] == v1["id"]
    assert "check_policy" in hist["supersessions"][0]["reason"]
    v2 = hist["skills"][1]
    assert (v2["successes"], v2["failures"]) == (7, 2)
    assert {c["kind"] for c in v2["counter_evidence"]} >= {"skipped_check", "extra_write"}
    old = api.get(f"/v1/skills/{v1['id']}", headers=auth()).json()
    assert len(old["supporting"]) == 3 and len(old["contradicting"]) == 2  # history kept
    assert [c["kind"] for c in old["skill"]["counter_evidence"]] == [
        c["kind"] for c in v1["counter_evidence"]]
    api.delete(f"/v1/owners/{o}", headers=auth())


def test_trace_and_skill_jobs_survive_a_killed_worker(settings: Settings,
                                                      memory: Memory) -> None:
    """A worker that claimed form_trace and died (no heartbeat, no completion) loses nothing:
    once its lease expires another worker claims the job again (attempt 2) and forms the cases;
    form_skills likewise; the skill is formed once."""
    fast = Memory(settings.model_copy(update={"job_lease_s": 1.0}), Store(settings),
                  memory.embedder)
    q, o, tenant = JobQueue(fast.store), new_owner(), "tenant-a"
    try:
        report = fast.procedural.ingest(fast.stores(tenant), [TraceIn.model_validate(
            run(o, 1, "success", ["get_order", "cancel_order"]))])
        trace = report.ids[0]
        for step in (FORM_TRACE, FORM_SKILLS):
            dead = wait_for(lambda s=step: q.claim("dead-worker", [s], 1.0, tenant), timeout=10)
            assert dead.attempts == 1 and dead.owner == o  # claimed, then the worker "dies"
            worker = Worker(fast, tenant=tenant, poll_s=0.05, lease_s=5, prune=False)
            wait_for(worker.run_once, timeout=15)  # reclaimed once the lease has expired
            job = q.get(tenant, dead.id)
            assert job.state == "done" and job.attempts == 2 and job.worker != "dead-worker"
            assert job.result is not None
        found = fast.procedural.search(fast.stores(tenant),
                                       SkillSearch(query="cancel my order", owner=o))
        assert [s.successes for s in found.skills] == [1]
        cases = fast.procedural.search(fast.stores(tenant), SkillSearch(query="cancel", owner=o,
                                                           units="cases"))
        assert [c.trace_id for c in cases.cases] == [trace]
    finally:
        fast.ops(tenant).delete_owner(o)
        fast.store.close()


def test_tenants_are_isolated_and_bad_input_names_the_field(api: TestClient,
                                                            memory: Memory) -> None:
    o = new_owner()
    r = api.post("/v1/traces", json=run(o, 1, "success", ["cancel_order"]), headers=auth())
    assert r.status_code == 201
    drain(memory, "tenant-a")
    other = api.post("/v1/skills/search", json={"query": "cancel order", "owner": o},
                     headers=auth("key-b")).json()
    assert other["skills"] == []
    assert api.post(f"/v1/traces/{r.json()['ids'][0]}/outcome", json={"outcome": "failure"},
                    headers=auth("key-b")).status_code == 404
    bad = run(o, 2, "success", [])
    bad["messages"][1]["role"] = "robot"
    res = api.post("/v1/traces", json={"traces": [run(o, 3, "success", []), bad]},
                   headers=auth())
    assert res.status_code == 422 and res.json()["field"] == "traces[1].messages[1].role"
    naive = run(o, 4, "success", [])
    naive["started_at"] = "2024-05-10T12:00:00"
    res = api.post("/v1/traces", json=naive, headers=auth())
    assert res.status_code == 422 and "started_at" in res.text
    clash = run(o, 5, "success", [], id="same")
    assert api.post("/v1/traces", json=clash, headers=auth()).status_code == 201
    clash["messages"][1]["content"] = "something else"
    assert api.post("/v1/traces", json=clash, headers=auth()).status_code == 409
    stored = memory.store.run("queries/procedural/trace", tenant="tenant-a", id="same")
    assert stored[0]["trace"]["id"] == "same" and stored[0]["trace"]["step_count"] == 3
    api.delete(f"/v1/owners/{o}", headers=auth())


def test_demo_release_run_supports_a_rollback_skill_under_staging(memory: Memory) -> None:
    from graphmem import demo

    tenant = "tenant-demo-procedural"
    try:
        demo.load(memory, tenant)
        demo.load(memory, tenant)  # idempotent
        found = memory.procedural.search(memory.stores(tenant),
                                         SkillSearch(query="rollback recovery staging",
                                                             owner="alice"))
        assert len(found.skills) == 1
        skill = found.skills[0]
        assert [(s.tool, s.writes) for s in skill.steps] == [
            ("list_snapshots", False), ("restore_snapshot", True), ("check_health", False)]
        assert skill.conditions["environment"] == ["staging"] and skill.successes == 1
        assert skill.cases and "Rollback recovery" in skill.cases[0].intent
    finally:
        memory.ops(tenant).delete_owner("alice")
        memory.ops(tenant).delete_owner("bob")
