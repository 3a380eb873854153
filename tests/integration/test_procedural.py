"""Procedural memory on the real Neo4j: traces in over HTTP, formation through the job handlers,
skills and cases out, revision with supersession, outcomes later, tenant isolation, forgetting."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from graphmem.service import Memory
from graphmem.worker import Worker

from .conftest import auth
from .helpers import owner as new_owner


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
