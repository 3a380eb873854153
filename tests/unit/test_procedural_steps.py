"""Unit tests of graphmem.procedural.steps and .boundaries: messages to steps, tools that write,
ids, and where a trace's requests begin."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.errors import InvalidInput
from graphmem.procedural.boundaries import boundaries, stretches
from graphmem.procedural.models import Step, TraceIn
from graphmem.procedural.steps import text_of, to_steps, trace_id, writes

T0 = datetime(2024, 5, 15, 12, tzinfo=UTC)


def call(name: str, args: str = "{}", cid: str = "c1") -> dict[str, object]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def test_openai_messages_become_ordered_steps() -> None:
    steps = to_steps([
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "cancel my booking ABC123"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("get_reservation", '{"id": "ABC123"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok"}'},
        {"role": "assistant", "content": "Sure", "tool_calls": [
            call("cancel_reservation", '{"id": "ABC123", "reason": "x"}', "c2")]},
    ])
    assert [s.kind for s in steps] == ["system", "user", "tool_call", "tool_result", "assistant",
                                       "tool_call"]
    assert [s.index for s in steps] == list(range(6))
    assert steps[2].tool == "get_reservation" and steps[2].writes is False
    assert steps[3].tool == "get_reservation"  # named from its call id
    assert steps[5].arg_keys == ["id", "reason"] and steps[5].writes is True


@pytest.mark.parametrize(("tool", "expected"), [
    ("get_user_details", False), ("search_direct_flight", False), ("calculate", False),
    ("searchFlights", False), ("think", False), ("book_reservation", True),
    ("cancel_reservation", True), ("send_certificate", True), ("transfer_to_human_agents", True),
    ("update-order", True)])
def test_a_tool_reads_by_its_first_verb(tool: str, expected: bool) -> None:
    assert writes(tool) is expected


def test_other_shapes_are_tolerated() -> None:
    steps = to_steps([
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}],
         "timestamp": "2024-05-15T12:00:00+02:00"},
        {"role": "assistant", "content": "", "function_call": {"name": "lookup",
                                                                "arguments": {"q": 1}}},
        {"role": "assistant", "tool_calls": [call("f", "not json")]},
    ])
    assert steps[0].text == "hi" and steps[0].at == datetime(2024, 5, 15, 10, tzinfo=UTC)
    assert steps[1].tool == "lookup" and steps[1].arg_keys == ["q"]
    assert steps[2].arguments == "not json"
    assert text_of(None) == ""


@pytest.mark.parametrize(("messages", "field"), [
    ([{"role": "robot", "content": "x"}], "messages[0].role"),
    ([{"role": "user", "content": "x", "timestamp": "2024-05-15T12:00:00"}],
     "messages[0].timestamp"),
    ([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}],
     "messages[0].tool_calls[0].function.name"),
    ([{"role": "assistant", "tool_calls": "x"}], "messages[0].tool_calls"),
])
def test_bad_messages_name_the_field(messages: list[dict[str, object]], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        to_steps(messages)
    assert err.value.field == field


def test_derived_ids_ignore_the_outcome_but_not_the_content() -> None:
    def t(**kw: object) -> TraceIn:
        body = {"owner": "a", "started_at": "2024-05-15T12:00:00Z",
                "messages": [{"role": "user", "content": "x"}], **kw}
        return TraceIn.model_validate(body)

    assert trace_id(t()) == trace_id(t(outcome="success"))
    assert trace_id(t()) != trace_id(t(messages=[{"role": "user", "content": "y"}]))


def user(i: int, text: str, at: datetime | None = None) -> Step:
    return Step(index=i, kind="user", text=text, at=at)


def write(i: int) -> Step:
    return Step(index=i, kind="tool_call", tool="cancel_order", writes=True)


def test_one_request_stays_one_stretch() -> None:
    steps = [user(0, "cancel my order"), write(1), user(2, "also, can you refund it?")]
    assert boundaries(steps) == [0]


def test_explicit_marker_and_long_pause_start_a_stretch() -> None:
    steps = [user(0, "cancel my order", T0), write(1), user(2, "New task: book a table", T0),
             user(3, "and then?", T0 + timedelta(hours=2))]
    assert boundaries(steps) == [0, 2, 3]
    assert [len(s) for s in stretches(steps, [0, 2, 3])] == [2, 1, 1]


def test_intent_shift_needs_a_write_a_request_and_a_dissimilar_turn() -> None:
    steps = [user(0, "cancel my order"), write(1), user(2, "I want to book a flight")]
    far = {0: [1.0, 0.0], 2: [0.0, 1.0]}
    near = {0: [1.0, 0.0], 2: [1.0, 0.1]}
    assert boundaries(steps, far) == [0, 2]
    assert boundaries(steps, near) == [0]
    assert boundaries(steps[:1] + steps[2:], far) == [0]  # nothing was done yet


@given(st.lists(st.sampled_from(["user", "tool_call", "assistant"]), max_size=30))
def test_stretches_partition_the_steps(kinds: list[str]) -> None:
    steps = [Step(index=i, kind=k, text="new task: x" if k == "user" else "",  # type: ignore[arg-type]
                  tool="t" if k == "tool_call" else None) for i, k in enumerate(kinds)]
    parts = stretches(steps, boundaries(steps))
    assert [s for p in parts for s in p] == steps
    assert all(parts)
