"""The LLM path of procedural formation: boundaries inside a trace, a case's summary and lessons,
and a skill written (or revised) from its cases and the existing version. Each prompt has one
worked example with the short ids a real prompt has (``u1``, ``c1``, ``f1``) and the JSON the
reply must hold; every reply is validated (ids and tools must be ones shown), and any failure
(`LLMError`, a reply that does not hold up) raises `Fallback`, so formation takes the no-LLM path
and records why. Calls go through `graphmem.llm.LLMClient` (usage accounted per operation).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from graphmem.llm.client import LLMClient, LLMError
from graphmem.procedural.models import Action, SkillStep, Step
from graphmem.retrieval.context import prompt_safe

MAX_TURN_CHARS = 400
MAX_CASES = 12
"""Cases shown per skill prompt (successful first, then failed)."""


class Fallback(Exception):
    """The LLM path could not be used for this item; formation falls back and records why."""


# --- boundaries --------------------------------------------------------------------------------
class BoundaryReply(BaseModel):
    starts: list[str] = Field(default_factory=list, description="user turn ids opening a task")


BOUNDARY_EXAMPLE_IN = """\
[u1] Hi, I'm mia_li_3668. Please cancel reservation NO6JO3, I can't travel.
  (tools: get_reservation_details, cancel_reservation)
[u2] Yes, go ahead.
[u3] Thanks! Separate thing: how many bags can I check on reservation 4WQ150?
  (tools: get_reservation_details)"""
BOUNDARY_EXAMPLE_OUT = '{"starts": ["u3"]}'
BOUNDARY_SYSTEM = f"""\
You split an agent's run into tasks. You see the user's turns in order, each with its id in \
brackets and the tools the agent called after it. A new task starts at a user turn that asks \
for something new and unrelated to the request before it (not an answer, a confirmation or a \
detail of the same request). The first turn always starts a task: do not list it.

Example. For this run:
{BOUNDARY_EXAMPLE_IN}

the reply is:
{BOUNDARY_EXAMPLE_OUT}

Reply with only a JSON object {{"starts": [...]}} listing the ids of the turns that start a new \
task (an empty list when the run is one task), citing only ids shown."""


def boundary_messages(steps: Sequence[Step]) -> tuple[list[dict[str, str]], dict[str, int]]:
    """The prompt and the ids it shows (``u1``.. -> step index)."""
    ids: dict[str, int] = {}
    lines: list[str] = []
    tools: list[str] = []
    for s in steps:
        if s.kind == "user" and s.text.strip():
            if lines and tools:
                lines.append(f"  (tools: {', '.join(dict.fromkeys(tools))})")
            tools = []
            alias = f"u{len(ids) + 1}"
            ids[alias] = s.index
            text = " ".join(s.text.split())[:MAX_TURN_CHARS]
            lines.append(prompt_safe(f"[{alias}] {text}"))
        elif s.kind == "tool_call" and s.tool:
            tools.append(s.tool)
    if lines and tools:
        lines.append(f"  (tools: {', '.join(dict.fromkeys(tools))})")
    return [{"role": "system", "content": BOUNDARY_SYSTEM},
            {"role": "user", "content": "Run:\n" + "\n".join(lines)}], ids


def boundaries(client: LLMClient, steps: Sequence[Step]) -> list[int]:
    """Indices where a stretch starts (0 first), as `boundaries.boundaries` returns them."""
    messages, ids = boundary_messages(steps)
    if len(ids) < 2:
        return [0] if steps else []
    schema = {"type": "object", "additionalProperties": False, "required": ["starts"],
              "properties": {"starts": {"type": "array",
                                        "items": {"type": "string", "enum": list(ids)[1:]}}}}
    reply = _ask(client, "procedural_boundaries", messages, BoundaryReply, schema)
    unknown = [a for a in reply.starts if a not in ids]
    if unknown:
        raise Fallback(f"boundaries cite unknown turns {unknown[:5]}")
    return sorted({0, *(ids[a] for a in reply.starts if ids[a] > 0)})


# --- case summary and lessons ------------------------------------------------------------------
class CaseNotes(BaseModel):
    summary: str = Field(min_length=1, max_length=1000)
    lessons: list[str] = Field(default_factory=list, max_length=5)


CASE_EXAMPLE_IN = """\
Outcome: failure
Request: I want to cancel reservation NO6JO3, I'm sick. My id is mia_li_3668.
Actions (* changes state):
1. get_user_details(user_id)
2. get_reservation_details(reservation_id)
3. cancel_reservation*(reservation_id)
Tool errors: none"""
CASE_EXAMPLE_OUT = """\
{"summary": "Cancelled reservation NO6JO3 for user mia_li_3668 after reading the user and the \
reservation; the run was judged a failure.",
 "lessons": ["Check the cancellation policy (insurance, fare class) before cancel_reservation"]}"""
CASE_SYSTEM = f"""\
You write a short record of one attempt by an agent at one request: a one or two sentence \
summary of what was asked and done, and at most three lessons (what to repeat or avoid next \
time), each grounded in the actions and the outcome shown. No lesson you cannot ground: an \
empty list is fine.

Example. For this attempt:
{CASE_EXAMPLE_IN}

the reply is:
{CASE_EXAMPLE_OUT}

Reply with only a JSON object with the keys "summary" and "lessons" as in the example."""


def _actions_text(actions: Sequence[Action]) -> str:
    return "\n".join(f"{n}. {a.tool}{'*' if a.writes else ''}({', '.join(a.keys)})"
                     for n, a in enumerate(actions, 1)) or "(no tool call)"


def case_notes(client: LLMClient, request: str, actions: Sequence[Action], outcome: str,
               errors: int) -> CaseNotes:
    body = (f"Outcome: {outcome}\nRequest: {' '.join(request.split())[:2000]}\n"
            f"Actions (* changes state):\n{_actions_text(actions)}\n"
            f"Tool errors: {errors or 'none'}")
    messages = [{"role": "system", "content": CASE_SYSTEM},
                {"role": "user", "content": prompt_safe(body)}]
    reply = _ask(client, "procedural_case", messages, CaseNotes)
    return CaseNotes(summary=reply.summary.strip(),
                     lessons=[x.strip() for x in reply.lessons if x.strip()][:3])


# --- skills ------------------------------------------------------------------------------------
class SkillStepReply(BaseModel):
    tool: str
    keys: list[str] = Field(default_factory=list)


class SkillReply(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(min_length=1, max_length=2000)
    when_to_use: str = Field(min_length=1, max_length=2000)
    steps: list[SkillStepReply] = Field(min_length=1, max_length=50)
    pitfalls: list[str] = Field(default_factory=list, max_length=10)


SKILL_EXAMPLE_IN = """\
Current version: none

Successful cases:
[c1] "Please cancel reservation NO6JO3, I'm sick and have insurance"
  get_user_details(user_id) -> get_reservation_details(reservation_id) -> \
cancel_reservation*(reservation_id)
[c2] "Cancel my trip 4WQ150 booked yesterday"
  get_reservation_details(reservation_id) -> cancel_reservation*(reservation_id)

Failed cases:
[f1] "Cancel reservation XEHM4B, basic economy, no insurance"
  get_reservation_details(reservation_id) -> cancel_reservation*(reservation_id)"""
SKILL_EXAMPLE_OUT = """\
{"name": "Cancel a reservation",
 "description": "Look the reservation up, check it may be cancelled, then cancel it.",
 "when_to_use": "A user asks to cancel a booked trip and gives (or can find) its reservation id",
 "steps": [{"tool": "get_reservation_details", "keys": ["reservation_id"]},
           {"tool": "cancel_reservation", "keys": ["reservation_id"]}],
 "pitfalls": ["f1 cancelled a basic economy booking without insurance: check the fare and \
insurance first"]}"""
SKILL_SYSTEM = f"""\
You write a reusable method (a skill) for an agent from its own runs: successful cases (c1, \
c2, ...) are evidence for the method, failed cases (f1, f2, ...) show what went wrong. When a \
current version is given, revise it: keep what the cases still support, change only what they \
contradict. Steps are tool calls in order, using only the tools shown in the successful cases, \
with the argument keys they passed; keep every tool marked * (it changes state). Pitfalls come \
from the failed cases only.

Example. For these cases:
{SKILL_EXAMPLE_IN}

the reply is:
{SKILL_EXAMPLE_OUT}

Reply with only a JSON object with the keys "name", "description", "when_to_use", "steps" and \
"pitfalls" as in the example."""


def skill_messages(good: Sequence[tuple[str, Sequence[Action]]],
                   bad: Sequence[tuple[str, Sequence[Action]]],
                   current: dict[str, Any] | None) -> list[dict[str, str]]:
    def block(prefix: str, cases: Sequence[tuple[str, Sequence[Action]]]) -> str:
        return "\n".join(
            f'[{prefix}{n}] "{" ".join(intent.split())[:300]}"\n  ' + " -> ".join(
                f"{a.tool}{'*' if a.writes else ''}({', '.join(a.keys)})" for a in acts)
            for n, (intent, acts) in enumerate(cases[:MAX_CASES], 1)) or "(none)"
    now = "none" if current is None else json.dumps(current, ensure_ascii=False)
    body = (f"Current version: {now}\n\nSuccessful cases:\n{block('c', good)}\n\n"
            f"Failed cases:\n{block('f', bad)}")
    return [{"role": "system", "content": SKILL_SYSTEM},
            {"role": "user", "content": prompt_safe(body)}]


def write_skill(client: LLMClient, good: Sequence[tuple[str, Sequence[Action]]],
                bad: Sequence[tuple[str, Sequence[Action]]], current: dict[str, Any] | None,
                consensus: Sequence[SkillStep]) -> tuple[SkillReply, list[SkillStep]]:
    """The skill as the model writes it, with its steps checked against the evidence: only tools
    of the successful cases, every state-changing tool of the consensus kept, ``writes``,
    ``support`` and the typed slots taken from the cases (never from the reply)."""
    reply = _ask(client, "procedural_skill", skill_messages(good, bad, current), SkillReply)
    seen: dict[str, Action] = {a.tool: a for _, acts in good for a in acts}
    unknown = [s.tool for s in reply.steps if s.tool not in seen]
    if unknown:
        raise Fallback(f"skill steps name tools no successful case called: {unknown[:5]}")
    missing = [s.tool for s in consensus if s.writes and s.tool not in
               {r.tool for r in reply.steps}]
    if missing:
        raise Fallback(f"skill steps drop state-changing tools: {missing[:5]}")
    support = {s.tool: s.support for s in consensus}
    slots = {s.tool: s.slots for s in consensus}
    steps = [SkillStep(tool=s.tool, keys=sorted(set(s.keys) & set(seen[s.tool].keys)),
                       writes=seen[s.tool].writes, slots=slots.get(s.tool, seen[s.tool].slots),
                       support=support.get(s.tool) or sum(
                           any(a.tool == s.tool for a in acts) for _, acts in good))
             for s in reply.steps]
    return reply, steps


def _ask(client: LLMClient, operation: str, messages: list[dict[str, str]],
         schema: type[Any], response_schema: dict[str, Any] | None = None) -> Any:
    try:
        return client.complete_structured(operation, messages, schema,
                                          response_schema=response_schema)
    except LLMError as exc:
        raise Fallback(f"{operation}: {exc}") from exc
