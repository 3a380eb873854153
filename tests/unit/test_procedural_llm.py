"""Unit tests of the LLM path of procedural formation (`graphmem.procedural.llm`) against
`ScriptedOpenAIServer` (tests/support: an in-process OpenAI-compatible TEST DOUBLE, no model)
through the real `LLMClient`: validated replies, usage accounted, and the fallback to the no-LLM
path (`Fallback`, recorded by `formation.LLMUse`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from graphmem.llm.client import LLMClient, LLMSettings
from graphmem.procedural import llm as pllm
from graphmem.procedural import skills as sk
from graphmem.procedural.formation import LLMUse
from graphmem.procedural.models import Action, Step
from graphmem.procedural.steps import to_steps
from tests.support.scripted_openai import ScriptedOpenAIServer

T0 = datetime(2024, 5, 15, 12, tzinfo=UTC)


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture
def client(srv: ScriptedOpenAIServer) -> Iterator[LLMClient]:
    settings = LLMSettings(base_url=srv.base_url, model="test-model", max_retries=1,
                           backoff_base_s=0.01, timeout_s=5.0)
    with LLMClient(settings) as c:
        yield c


def two_tasks() -> list[Step]:
    def call(name: str, cid: str) -> dict[str, object]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": json.dumps({"reservation_id": "NO6JO3"})}}]}
    return to_steps([
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Cancel reservation NO6JO3 please, I'm mia_li_3668"},
        call("cancel_reservation", "c1"),
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        {"role": "user", "content": "Yes, thanks."},
        {"role": "user", "content": "How many bags can I take on 4WQ150?"},
        call("get_reservation_details", "c2"),
        {"role": "tool", "tool_call_id": "c2", "content": "{}"}])


def test_boundaries_cite_shown_turns_and_map_to_steps(srv: ScriptedOpenAIServer,
                                                      client: LLMClient) -> None:
    steps = two_tasks()
    srv.reply_json({"starts": ["u3"]})
    assert pllm.boundaries(client, steps) == [0, 5]
    prompt = srv.requests[0]["messages"]
    assert "[u1] Cancel reservation NO6JO3" in prompt[1]["content"]
    assert "(tools: cancel_reservation)" in prompt[1]["content"]
    assert '{"starts": ["u3"]}' in prompt[0]["content"]  # the worked example
    assert [(u.operation, u.ok, u.prompt_tokens) for u in client.ledger.records()] == [
        ("procedural_boundaries", True, 11)]  # usage accounted by the client


def test_an_unknown_turn_or_a_failing_server_falls_back(srv: ScriptedOpenAIServer,
                                                        client: LLMClient) -> None:
    steps = two_tasks()
    srv.reply_json({"starts": ["u9"]})
    with pytest.raises(pllm.Fallback, match="unknown turns"):
        pllm.boundaries(client, steps)
    srv.reply_status(500, "boom")
    srv.reply_status(500, "boom")
    use = LLMUse(True)
    assert use.run("boundaries", lambda c: pllm.boundaries(c, steps), client) is None
    assert use.report()["fallback_count"] == 1 and "boundaries" in use.report()["fallbacks"][0]
    assert [u.ok for u in client.ledger.records()] == [True, False]  # parsed, then rejected


def test_case_notes_are_validated(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    acts = [Action(tool="cancel_reservation", keys=["reservation_id"], writes=True)]
    srv.reply_json({"summary": "Cancelled NO6JO3.", "lessons": ["check insurance", " "]})
    notes = pllm.case_notes(client, "cancel NO6JO3", acts, "success", 0)
    assert notes.summary == "Cancelled NO6JO3." and notes.lessons == ["check insurance"]
    assert "cancel_reservation*(reservation_id)" in srv.requests[0]["messages"][1]["content"]
    srv.reply_text("not json")
    srv.reply_json({"lessons": []})  # no summary: invalid twice, then the fallback
    with pytest.raises(pllm.Fallback, match="procedural_case"):
        pllm.case_notes(client, "cancel NO6JO3", acts, "success", 0)


def test_skill_is_written_from_cases_and_checked_against_them(
        srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    get = Action(tool="get_reservation_details", keys=["reservation_id"], writes=False)
    cancel = Action(tool="cancel_reservation", keys=["reservation_id", "reason"], writes=True)
    good = [("cancel NO6JO3", [get, cancel]), ("cancel 4WQ150", [cancel])]
    bad = [("cancel XEHM4B", [get])]
    consensus = sk.consensus([a for _, a in good])
    reply = {"name": "Cancel a reservation", "description": "Look up, then cancel.",
             "when_to_use": "A user asks to cancel a trip", "pitfalls": ["f1 never cancelled"],
             "steps": [{"tool": "get_reservation_details", "keys": ["reservation_id"]},
                       {"tool": "cancel_reservation", "keys": ["reservation_id", "made_up"]}]}
    srv.reply_json(reply)
    current = {"name": "cancel_reservation", "steps": ["cancel_reservation(reservation_id)!"],
               "pitfalls": []}
    out, steps = pllm.write_skill(client, good, bad, current, consensus)
    assert out.name == "Cancel a reservation"
    assert [(s.tool, s.keys, s.writes) for s in steps] == [
        ("get_reservation_details", ["reservation_id"], False),
        ("cancel_reservation", ["reservation_id"], True)]  # keys only as the cases passed them
    body = srv.requests[0]["messages"][1]["content"]
    assert "[c2]" in body and "[f1]" in body and "Current version: {" in body
    srv.reply_json({**reply, "steps": [{"tool": "refund_everything", "keys": []}]})
    with pytest.raises(pllm.Fallback, match="no successful case called"):
        pllm.write_skill(client, good, bad, None, consensus)
    srv.reply_json({**reply, "steps": [{"tool": "get_reservation_details", "keys": []}]})
    with pytest.raises(pllm.Fallback, match="drop state-changing"):
        pllm.write_skill(client, good, bad, None, consensus)
