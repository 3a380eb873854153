"""The MCP server end to end with the SDK's own client, on the real Neo4j: streamable HTTP at
``/mcp`` of the real API (served by uvicorn on a free port, API keys) and stdio (``graphmem mcp``
as a subprocess). Every tool is called; bad input, unknown ids and wrong keys come back as tool
errors or 401s, never as crashes; tenants stay apart."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from graphmem.access import Access
from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.facts.models import ObservationIn
from graphmem.models import MessageIn
from graphmem.operations import WRITE_TOOLS
from graphmem.ops.worker import Worker
from graphmem.service import Memory
from tests.integration.conftest import KEYS
from tests.integration.helpers import msg, owner

ONE_OWNER = "mcp-one-owner"

TOOLS = {"add_messages", "search_memory", "get_context", "list_sessions", "get_session_messages",
         "record_facts", "query_facts", "fact_history", "get_profile", "update_profile",
         "forget_message", "forget_fact", "forget_session", "forget_owner", "run_audit_query",
         "add_traces", "set_outcome", "search_skills", "get_skill", "get_case", "forget",
         "search_documents"}
"""Every tool: the servers under test here offer them all (``mcp_tools="all"``)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def mcp_url(settings: Settings, memory: Memory) -> Iterator[str]:
    """The real API (with /mcp) served by uvicorn in a thread, keys of tenant-a and tenant-b."""
    port = _free_port()
    keys: dict[str, str | Access] = {hash_api_key(k): t for k, t in KEYS.items()}
    keys[hash_api_key("key-a-one-owner")] = Access(tenant="tenant-a",
                                                   owners=frozenset({ONE_OWNER}))
    s = settings.model_copy(update={"api_keys": keys, "host": "127.0.0.1", "port": port,
                                    "mcp_tools": "all"})
    server = uvicorn.Server(uvicorn.Config(create_app(s, memory), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)


def over_http(url: str, key: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        async with (create_mcp_http_client(headers=headers) as http,
                    Client(streamable_http_client(url, http_client=http)) as client):
            return await work(client)

    return asyncio.run(main())


def data(result: Any) -> Any:
    """A tool result's structured value (lists come wrapped as ``{"result": [...]}``)."""
    assert not result.is_error, result.content
    value = result.structured_content
    return value["result"] if isinstance(value, dict) and set(value) == {"result"} else value


def error_text(result: Any) -> str:
    assert result.is_error, result
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_http_lists_every_tool_with_a_description(mcp_url: str) -> None:
    async def work(client: Client) -> Any:
        return (await client.list_tools()).tools, \
            (await client.list_resource_templates()).resource_templates

    tools, templates = over_http(mcp_url, "key-a", work)
    assert {t.name for t in tools} == TOOLS
    assert {t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)} \
        == WRITE_TOOLS  # what a read-only stdio server leaves out
    for tool in tools:
        assert tool.description and len(tool.description) > 40, tool.name
    audit_tool = next(t for t in tools if t.name == "run_audit_query")
    assert "true_at" in (audit_tool.description or "")
    assert {t.uri_template for t in templates} == {
        "graphmem://sessions/{+session_id}/messages{?owner}",
        "graphmem://facts/{+fact_id}/history"}


def test_http_every_tool_works(mcp_url: str) -> None:
    who = owner()
    sid = "trips/2026"  # ids may hold "/": the resources take them as they are or as %2F
    turns = [msg(0, who, sid, text="I moved to Lisbon last month."),
             msg(1, who, sid, text="Nice! Do you like the tram there?"),
             msg(2, who, sid, text="Yes, line 28 goes right past my flat.",
                 metadata={"channel": "sms"})]

    async def work(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["add"] = data(await client.call_tool("add_messages", {"messages": turns}))
        out["search"] = data(await client.call_tool(
            "search_memory", {"query": "where does she live", "owner": who, "k": 3}))
        context = await client.call_tool("get_context", {"query": "which tram line", "owner": who})
        assert not context.is_error, context.content
        out["context"] = context.content[0].text
        out["by_channel"] = data(await client.call_tool("search_memory", {
            "query": "where does she live", "owner": who, "metadata": {"channel": "sms"}}))
        sms = await client.call_tool("get_context", {"query": "where does she live",
                                                     "owner": who, "metadata": {"channel": "sms"}})
        out["sms_context"] = sms.content[0].text
        out["session"] = data(await client.call_tool(
            "get_session_messages", {"session_id": sid, "owner": who}))
        first = data(await client.call_tool("record_facts", {"observations": [
            {"owner": who, "subject": who, "type": "city", "content": "Porto",
             "valid_from": "2026-01-01T00:00:00Z"}]}))
        second = data(await client.call_tool("record_facts", {"observations": [
            {"owner": who, "subject": who, "type": "city", "content": "Lisbon",
             "valid_from": "2026-03-01T00:00:00Z", "sources": [turns[0]["id"]],
             "reason": "said she moved"}]}))
        out["facts"] = (first, second)
        out["now"] = data(await client.call_tool("query_facts", {"owner": who, "type": "city"}))
        out["then"] = data(await client.call_tool(
            "query_facts", {"owner": who, "type": "city", "as_of": "2026-02-01T00:00:00Z"}))
        out["history"] = data(await client.call_tool("fact_history", {"fact_id": second[0]["id"]}))
        out["profile_ops"] = data(await client.call_tool("update_profile", {"ops": [
            {"op": "ADD", "owner": who, "key": "employer", "value": "Acme"}]}))
        out["profile"] = data(await client.call_tool("get_profile", {"owner": who}))
        out["audit"] = data(await client.call_tool("run_audit_query", {
            "name": "true_at", "params": {"owner": who, "t": "2026-02-01T00:00:00Z"}}))
        session = await client.read_resource(f"graphmem://sessions/{sid}/messages?owner={who}")
        out["session_resource"] = json.loads(session.contents[0].text)
        encoded = await client.read_resource(
            f"graphmem://sessions/{sid.replace('/', '%2F')}/messages?owner={who}")
        assert json.loads(encoded.contents[0].text) == out["session_resource"]
        chain = await client.read_resource(f"graphmem://facts/{second[0]['id']}/history")
        out["history_resource"] = json.loads(chain.contents[0].text)
        await client.call_tool("add_messages", {"messages": [
            msg(3, who, "aside", text="Please forget what I said about my neighbour."),
            msg(4, who, "aside", text="My neighbour Bob plays drums at night.")]})
        out["forget_message"] = data(await client.call_tool(
            "forget_message", {"message_id": f"{who}-aside-4"}))
        note = data(await client.call_tool("record_facts", {"observations": [
            {"owner": who, "subject": "Bob", "type": "habit", "content": "plays drums",
             "valid_from": "2026-01-01T00:00:00Z"}]}))
        out["forget_fact"] = data(await client.call_tool(
            "forget_fact", {"fact_id": note[0]["id"]}))
        out["sessions"] = data(await client.call_tool("list_sessions", {"owner": who}))
        out["forget_session"] = data(await client.call_tool(
            "forget_session", {"owner": who, "session_id": "aside"}))
        out["forget"] = data(await client.call_tool("forget_owner", {"owner": who}))
        out["after"] = data(await client.call_tool(
            "search_memory", {"query": "Lisbon", "owner": who}))
        return out

    out = over_http(mcp_url, "key-a", work)
    assert out["add"]["created"] == 3
    assert turns[0]["id"] in {h["id"] for h in out["search"]["hits"]}
    assert "line 28" in out["context"]
    assert [(h["id"], h["metadata"]) for h in out["by_channel"]["hits"]] == [
        (turns[2]["id"], {"channel": "sms"})]
    assert "line 28" in out["sms_context"] and "Lisbon" not in out["sms_context"]
    assert [m["id"] for m in out["session"]] == [t["id"] for t in turns]
    assert out["facts"][1][0]["superseded"] == [out["facts"][0][0]["id"]]
    assert [f["content"] for f in out["now"]] == ["Lisbon"]
    assert [f["content"] for f in out["then"]] == ["Porto"]
    assert [f["content"] for f in out["history"]["facts"]] == ["Porto", "Lisbon"]
    assert out["history"]["supersessions"][0]["reason"] == "said she moved"
    assert out["profile_ops"][0]["action"] == "created"
    assert [(f["type"], f["content"]) for f in out["profile"]] == [("employer", "Acme")]
    assert out["audit"]["name"] == "true_at"
    assert any(r.get("content") == "Porto" for r in out["audit"]["rows"]), out["audit"]
    assert [m["id"] for m in out["session_resource"]] == [t["id"] for t in turns]
    assert len(out["history_resource"]["facts"]) == 2
    assert [(x["session_id"], x["message_count"]) for x in out["sessions"]] == [
        ("aside", 1), (sid, 3)]
    assert out["forget_message"]["removed"]["messages"] == 1
    assert out["forget_fact"]["removed"] == {"facts": 1}
    assert out["forget_session"]["kind"] == "session"
    assert out["forget_session"]["removed"]["messages"] == 1
    assert out["forget"]["messages"] == 3
    assert out["after"].get("hits", []) == []


def test_http_errors_are_tool_errors(mcp_url: str, memory: Memory) -> None:
    who = owner()

    async def work(client: Client) -> dict[str, Any]:
        bad = {**msg(0, who), "timestamp": "2026-03-12T14:05:00"}  # no offset
        return {
            "no_offset": await client.call_tool("add_messages", {"messages": [bad]}),
            "missing": await client.call_tool("add_messages", {"messages": [{"owner": who}]}),
            "bad_k": await client.call_tool("search_memory",
                                            {"query": "x", "owner": who, "k": 0}),
            "unknown_fact": await client.call_tool("fact_history", {"fact_id": "no-such-fact"}),
            "inferred": await client.call_tool("record_facts", {"observations": [
                {"owner": who, "subject": who, "type": "city", "content": "Oslo",
                 "explicit": False}]}),
            "unknown_source": await client.call_tool("record_facts", {"observations": [
                {"owner": who, "subject": who, "type": "city", "content": "Oslo",
                 "sources": ["no-such-message"]}]}),
            "unknown_audit": await client.call_tool("run_audit_query", {"name": "drop_all"}),
            "audit_param": await client.call_tool("run_audit_query", {"name": "true_at"}),
            "bad_time": await client.call_tool("query_facts",
                                               {"owner": who, "as_of": "yesterday"}),
            "unknown_tool": await client.call_tool("no_such_tool", {}),
            "still_up": await client.call_tool("query_facts", {"owner": who}),
        }

    out = over_http(mcp_url, "key-a", work)
    assert "messages[0].timestamp" in error_text(out["no_offset"])
    assert "timezone offset" in error_text(out["no_offset"])
    assert "session_id" in error_text(out["missing"])
    assert "k" in error_text(out["bad_k"])
    assert "not found" in error_text(out["unknown_fact"])
    assert "observations[0].sources" in error_text(out["inferred"])
    assert "no-such-message" in error_text(out["unknown_source"])
    assert "no audit query" in error_text(out["unknown_audit"])
    assert "owner" in error_text(out["audit_param"])
    assert "as_of" in error_text(out["bad_time"])
    assert "no_such_tool" in error_text(out["unknown_tool"])
    assert data(out["still_up"]) == []
    # nothing of the refused writes was stored
    assert memory.for_tenant("tenant-a").facts.query(who) == []
    assert memory.for_tenant("tenant-a").messages.session("s1", who) == []


def _run(who: str, n: int, outcome: str, tools: list[str]) -> dict[str, Any]:
    """An agent's run in OpenAI chat format: a request, one tool call and result per tool."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Please cancel my last order, I am user u_7"}]
    for i, tool in enumerate(tools):
        cid = f"c{n}-{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": tool, "arguments": json.dumps({"order_id": f"#{n}"})}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "name": tool, "content": "{}"})
    return {"owner": who, "started_at": f"2026-03-{10 + n:02d}T12:00:00Z",
            "messages": messages, "outcome": outcome}


def test_http_procedural_tools(mcp_url: str, memory: Memory) -> None:
    """Runs in, formation (the worker's jobs), then skills and cases out, an outcome reported
    later; bad input and unknown ids are tool errors; another tenant sees nothing."""
    who = owner()
    runs = [_run(who, 1, "success", ["get_order", "cancel_order"]),
            _run(who, 2, "success", ["get_order", "cancel_order"]),
            _run(who, 3, "failure", ["get_order", "refund_order"])]

    async def write(client: Client) -> dict[str, Any]:
        return {
            "added": data(await client.call_tool("add_traces", {"traces": runs})),
            "again": data(await client.call_tool("add_traces", {"traces": runs[:1]})),
            "bad": await client.call_tool("add_traces", {"traces": [
                {**runs[0], "outcome": "great"}]}),
            "none": await client.call_tool("add_traces", {"traces": []}),
        }

    w = over_http(mcp_url, "key-a", write)
    assert w["added"]["created"] == 3
    assert w["again"] == {"ids": w["added"]["ids"][:1], "created": 0, "duplicates": 1}
    assert "traces[0].outcome" in error_text(w["bad"])
    assert "traces" in error_text(w["none"])
    worker = Worker(memory, tenant="tenant-a", poll_s=0.05, lease_s=30, prune=False)
    while worker.run_once():
        pass

    async def read(client: Client) -> dict[str, Any]:
        found = data(await client.call_tool("search_skills", {
            "query": "cancel an order", "owner": who, "k": 1}))
        skill_id = found["skills"][0]["id"]
        cases = data(await client.call_tool("search_skills", {
            "query": "cancel an order", "owner": who, "units": "cases", "k": 3}))
        return {
            "found": found, "cases": cases,
            "skill": data(await client.call_tool("get_skill", {"skill_id": skill_id})),
            "case": data(await client.call_tool("get_case",
                                                {"case_id": cases["cases"][0]["id"]})),
            "outcome": data(await client.call_tool("set_outcome", {
                "trace_id": w["added"]["ids"][2], "outcome": "success", "score": 1.0})),
            "bad_outcome": await client.call_tool("set_outcome", {
                "trace_id": w["added"]["ids"][2], "outcome": "great"}),
            "unknown_trace": await client.call_tool("set_outcome", {
                "trace_id": "no-such-trace", "outcome": "success"}),
            "context": (await client.call_tool("get_context", {
                "query": "cancel an order", "owner": who, "units": ["skill"]})).content[0].text,
            "unknown_skill": await client.call_tool("get_skill", {"skill_id": "no-such-skill"}),
            "bad_k": await client.call_tool("search_skills", {"query": "x", "owner": who,
                                                              "k": 0}),
        }

    r = over_http(mcp_url, "key-a", read)
    skill = r["found"]["skills"][0]
    assert [s["tool"] for s in skill["steps"]] == ["get_order", "cancel_order"]
    assert (skill["successes"], skill["failures"]) == (2, 1)
    assert len(skill["cases"]) == 2
    assert len(r["cases"]["cases"]) == 3
    assert len(r["skill"]["supporting"]) == 2 and len(r["skill"]["contradicting"]) == 1
    assert r["case"]["steps"] and r["case"]["case"]["id"] == r["cases"]["cases"][0]["id"]
    assert r["context"].startswith("## skill learned from earlier runs\n[e1] cancel_order\n")
    # the skill as the context renders it: steps with slots, the check before the write, why
    steps = "get_order(order_id: order id) -> cancel_order(order_id: order id)*"
    for line in (steps, "before cancel_order: get_order (2 of 2)", "why: similarity"):
        assert line in skill["text"] and line in r["context"]
    assert {c["outcome"] for c in skill["why"]["cases"]} == {"success"}
    assert skill["why"]["similarity"] > 0 and skill["why"]["words"] == ["cancel", "order"]
    assert r["outcome"] == {"id": w["added"]["ids"][2], "outcome": "success",
                            "previous": "failure"}
    assert "outcome" in error_text(r["bad_outcome"])
    assert "not found" in error_text(r["unknown_trace"])
    assert "not found" in error_text(r["unknown_skill"])
    assert "k" in error_text(r["bad_k"])

    async def as_b(client: Client) -> dict[str, Any]:
        return {
            "skills": data(await client.call_tool("search_skills", {
                "query": "cancel an order", "owner": who})),
            "skill": await client.call_tool("get_skill", {"skill_id": skill["id"]}),
            "outcome": await client.call_tool("set_outcome", {
                "trace_id": w["added"]["ids"][0], "outcome": "failure"}),
        }

    b = over_http(mcp_url, "key-b", as_b)
    assert b["skills"].get("skills", []) == []
    assert "not found" in error_text(b["skill"])
    assert "not found" in error_text(b["outcome"])
    over_http(mcp_url, "key-a", lambda c: c.call_tool("forget_owner", {"owner": who}))


def test_http_wrong_or_missing_key_is_401_and_the_server_keeps_serving(mcp_url: str) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic a2V5LWE="}):
        r = httpx.post(mcp_url, json=init, headers={**headers, **auth})
        assert r.status_code == 401, r.text
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["status"] == 401

    async def listing(client: Client) -> int:
        return len((await client.list_tools()).tools)

    with pytest.raises(Exception):  # noqa: B017 - the SDK's error for a refused connection
        over_http(mcp_url, "wrong", listing)
    assert over_http(mcp_url, "key-b", listing) == len(TOOLS)


def test_http_tenants_are_isolated(mcp_url: str) -> None:
    who = owner()
    turn = msg(0, who, text="My locker code is 4711.")

    async def as_a(client: Client) -> str:
        data(await client.call_tool("add_messages", {"messages": [turn]}))
        written = data(await client.call_tool("record_facts", {"observations": [
            {"owner": who, "subject": "locker", "type": "code", "content": "4711"}]}))
        hits = data(await client.call_tool("search_memory", {"query": "locker code",
                                                              "owner": who}))["hits"]
        assert [h["id"] for h in hits] == [turn["id"]]
        fact_id: str = written[0]["id"]
        return fact_id

    fact_id = over_http(mcp_url, "key-a", as_a)

    async def as_b(client: Client) -> dict[str, Any]:
        return {
            "search": data(await client.call_tool("search_memory", {"query": "locker code",
                                                                     "owner": who})),
            "session": data(await client.call_tool("get_session_messages",
                                                   {"session_id": "s1", "owner": who})),
            "facts": data(await client.call_tool("query_facts", {"owner": who})),
            "history": await client.call_tool("fact_history", {"fact_id": fact_id}),
            "context": (await client.call_tool("get_context", {"query": "locker code",
                                                               "owner": who})).content[0].text,
            "forget": data(await client.call_tool("forget_owner", {"owner": who})),
        }

    b = over_http(mcp_url, "key-b", as_b)
    assert b["search"].get("hits", []) == [] and b["session"] == [] and b["facts"] == []
    assert "not found" in error_text(b["history"])
    assert "4711" not in b["context"]
    assert b["forget"]["messages"] == 0

    async def again_a(client: Client) -> Any:
        return data(await client.call_tool("fact_history", {"fact_id": fact_id}))

    assert over_http(mcp_url, "key-a", again_a)["facts"][0]["content"] == "4711"  # untouched
    over_http(mcp_url, "key-a", lambda c: c.call_tool("forget_owner", {"owner": who}))


def _stdio(settings: Settings, *args: str) -> StdioServerParameters:
    """``graphmem mcp ARGS`` as Claude Desktop starts it, pointed at the test Neo4j."""
    env = {
        "GRAPHMEM_NEO4J_INSTANCE_DIR": str(settings.neo4j_instance_dir),
        "GRAPHMEM_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
        "GRAPHMEM_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
        "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "GRAPHMEM_MCP_TOOLS": "all",
        **{k: v for k, v in os.environ.items() if k in ("HF_HOME", "XDG_CACHE_HOME")},
    }
    return StdioServerParameters(command=str(Path(sys.executable).parent / "graphmem"),
                                 args=["mcp", *args], env=env)


def test_http_key_limited_to_one_owner(mcp_url: str, memory: Memory) -> None:
    """A key for one owner of tenant-a: its owner's memory works, another's is refused, and a
    fact of another owner is unknown to it."""
    other = owner()
    tm = memory.for_tenant("tenant-a")
    [fact] = tm.facts.observe([ObservationIn(owner=other, subject="locker", type="code",
                                             content="4711")])

    async def work(client: Client) -> dict[str, Any]:
        return {
            "add": data(await client.call_tool("add_messages", {"messages": [
                msg(0, ONE_OWNER, text="The boat leaves at nine.")]})),
            "search": data(await client.call_tool("search_memory", {
                "query": "boat", "owner": ONE_OWNER})),
            "other": await client.call_tool("query_facts", {"owner": other}),
            "add_other": await client.call_tool("add_messages", {"messages": [
                msg(1, ONE_OWNER), msg(0, other)]}),
            "history": await client.call_tool("fact_history", {"fact_id": fact.id}),
            "forget": await client.call_tool("forget_fact", {"fact_id": fact.id}),
        }

    out = over_http(mcp_url, "key-a-one-owner", work)
    assert out["add"]["created"] == 1
    # the best hit is its own message (an earlier test may have stored other turns of this owner)
    assert out["search"]["hits"][0]["text"] == "The boat leaves at nine."
    assert f"forbidden: owner: this key may not use owner {other!r}" in error_text(out["other"])
    assert "forbidden: messages[1].owner: " in error_text(out["add_other"])
    assert "not found" in error_text(out["history"]) and "not found" in error_text(out["forget"])
    assert len(tm.messages.session("s1", ONE_OWNER)) == 1  # the refused batch wrote nothing
    assert tm.facts.history(fact.id).facts[0].content == "4711"
    for o in (ONE_OWNER, other):
        tm.messages.forget_owner(o)


def test_stdio_serves_one_tenant(settings: Settings, memory: Memory, tenant: str) -> None:
    """``graphmem mcp --tenant T`` spawned as a subprocess, as Claude Desktop does."""
    who = owner()
    params = _stdio(settings, "--tenant", tenant)

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            return {
                "tools": {t.name for t in (await client.list_tools()).tools},
                "add": data(await client.call_tool("add_messages", {"messages": [
                    msg(0, who, text="The boat leaves at nine.")]})),
                "search": data(await client.call_tool("search_memory",
                                                      {"query": "when does the boat leave",
                                                       "owner": who})),
                "unknown": await client.call_tool("fact_history", {"fact_id": "nope"}),
                "bad": await client.call_tool("add_messages", {"messages": [{"text": "x"}]}),
                "still_up": data(await client.call_tool("get_profile", {"owner": who})),
            }

    out = asyncio.run(main())
    assert out["tools"] == TOOLS
    assert out["add"]["created"] == 1
    # the best hit is its own message (an earlier test may have stored other turns of this owner)
    assert out["search"]["hits"][0]["text"] == "The boat leaves at nine."
    assert "not found" in error_text(out["unknown"])
    assert "owner" in error_text(out["bad"])
    assert out["still_up"] == []
    stored = memory.for_tenant(tenant).messages.session("s1", who)
    assert [m.text for m in stored] == ["The boat leaves at nine."]
    assert memory.for_tenant("tenant-a").messages.session("s1", who) == []
    memory.for_tenant(tenant).messages.forget_owner(who)


def test_stdio_limited_to_one_owner_read_only(settings: Settings, memory: Memory,
                                              tenant: str) -> None:
    """``graphmem mcp --owner O --read-only``: the agent searches O's memory, nothing else; the
    tools that write are not offered."""
    who, other = owner(), owner()
    tm = memory.for_tenant(tenant)
    tm.messages.ingest([MessageIn(**msg(0, who, text="The boat leaves at nine.")),
                        MessageIn(**msg(0, other, text="The train leaves at ten."))])

    async def main() -> dict[str, Any]:
        async with Client(_stdio(settings, "--tenant", tenant, "--owner", who, "--read-only"),
                          read_timeout_seconds=120) as client:
            return {
                "tools": {t.name for t in (await client.list_tools()).tools},
                "search": data(await client.call_tool("search_memory", {
                    "query": "when does it leave", "owner": who})),
                "other": await client.call_tool("search_memory", {
                    "query": "when does it leave", "owner": other}),
                "add": await client.call_tool("add_messages", {"messages": [
                    msg(1, who, text="Bring a coat.")]}),
                "forget": await client.call_tool("forget_owner", {"owner": who}),
            }

    out = asyncio.run(main())
    # the best hit is its own message (an earlier test may have stored other turns of this owner)
    assert out["search"]["hits"][0]["text"] == "The boat leaves at nine."
    assert f"forbidden: owner: this key may not use owner {other!r}" in error_text(out["other"])
    assert out["tools"] == TOOLS - WRITE_TOOLS
    assert "Unknown tool" in error_text(out["add"]) and "Unknown tool" in error_text(out["forget"])
    assert len(tm.messages.session("s1", who)) == 1 and len(tm.messages.session("s1", other)) == 1
    for o in (who, other):
        tm.messages.forget_owner(o)
