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
        {"role": "assistant", "tool_calls": [{"name": "g", "args": {"k": 1}, "id": "c9",
                                              "type": "tool_call"}]},  # LangChain's shape
    ])
    assert steps[0].text == "hi" and steps[0].at == datetime(2024, 5, 15, 10, tzinfo=UTC)
    assert steps[1].tool == "lookup" and steps[1].arg_keys == ["q"]
    assert steps[2].arguments == "not json"
    assert steps[3].tool == "g" and steps[3].arg_keys == ["k"] and steps[3].call_id == "c9"
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


def test_anthropic_messages_give_calls_and_results() -> None:
    steps = to_steps([
        {"role": "user", "content": "Cancel order #7 please"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look it up first"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"id": "#7"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": [{"type": "text", "text": '{"status": "open"}'}]}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "cancel_order",
             "input": {"id": "#7", "reason": "asked"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "refused",
             "is_error": True},
            {"type": "text", "text": "Why did that fail?"}]},
    ])
    assert [s.kind for s in steps] == ["user", "assistant", "tool_call", "tool_result",
                                       "tool_call", "tool_result", "user"]
    assert steps[1].text == "Let me check."  # the thinking block is no text of the run
    assert steps[2].tool == "get_order" and steps[2].writes is False
    assert steps[3].tool == "get_order" and steps[3].text == '{"status": "open"}'
    assert steps[4].arg_keys == ["id", "reason"] and steps[4].writes is True
    assert steps[5].error and steps[5].tool == "cancel_order" and steps[6].text.startswith("Why")


def test_openai_responses_items_give_calls_and_results() -> None:
    steps = to_steps([
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Refund my order #9"}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_order",
         "arguments": '{"id": "#9"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"paid": 20}'},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "refund policy"}},
        {"type": "function_call", "call_id": "call_2", "name": "refund_order",
         "arguments": '{"id": "#9", "amount": 20}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "Error: too late"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Sorry, it is too late."}]},
    ])
    assert [s.kind for s in steps] == ["user", "tool_call", "tool_result", "tool_call",
                                       "tool_call", "tool_result", "assistant"]
    assert steps[0].text == "Refund my order #9"
    assert steps[2].tool == "get_order" and steps[2].call_id == "call_1"
    assert steps[3].tool == "web_search" and steps[3].writes is False
    assert steps[3].arg_keys == ["query", "type"]
    assert steps[4].tool == "refund_order" and steps[4].writes is True
    assert steps[5].error and steps[5].tool == "refund_order"


def test_gemini_contents_give_calls_and_results() -> None:
    steps = to_steps([
        {"role": "user", "parts": [{"text": "Cancel order #3"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_order", "args": {"id": "#3"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_order",
                                                         "response": {"status": "open"}}}]},
        {"role": "model", "parts": [{"text": "Cancelling."},
                                    {"function_call": {"name": "cancel_order",
                                                       "args": {"id": "#3"}}}]},
        {"role": "function", "parts": [{"functionResponse": {"name": "cancel_order",
                                                             "response": {"ok": True}}}]},
    ])
    assert [s.kind for s in steps] == ["user", "tool_call", "tool_result", "assistant",
                                       "tool_call", "tool_result"]
    assert steps[0].text == "Cancel order #3" and steps[1].arg_keys == ["id"]
    assert steps[2].tool == "get_order" and steps[2].text == '{"status": "open"}'
    assert steps[4].tool == "cancel_order" and steps[4].writes is True
    assert steps[5].tool == "cancel_order"


@pytest.mark.parametrize(("messages", "field"), [
    ([{"type": ["x"]}], "messages[0].type"),
    ([{"type": "unknown_item"}], "messages[0].role"),
    ([{"type": "function_call", "arguments": "{}"}], "messages[0].name"),
    ([{"type": "function_call", "name": "f", "arguments": [1]}], "messages[0].arguments"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "input": {}}]}],
     "messages[0].content[0].name"),
    ([{"role": "model", "parts": [{"functionCall": {"args": {}}}]}],
     "messages[0].parts[0].functionCall.name"),
    ([{"role": "user", "content": [{"type": "tool_result", "content": "x" * 101}]}],
     "messages[0].content[0]"),
])
def test_bad_items_and_blocks_name_the_field(messages: list[dict[str, object]],
                                             field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        to_steps(messages, max_chars=100)
    assert err.value.field == field


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "role", "content", "parts", "name", "id", "call_id",
                         "arguments", "input", "output", "text", "tool_use_id", "is_error",
                         "functionCall", "functionResponse", "args", "response", "action",
                         "tool_calls", "function", "tool_call_id"]), inner, max_size=5),
    max_leaves=12)
_KEYS = st.sampled_from(["type", "role", "content", "parts", "name", "call_id", "arguments",
                         "output", "tool_calls", "tool_call_id", "function_call"])
_VALUES = _JSON | st.sampled_from(["user", "assistant", "model", "tool", "function_call",
                                   "function_call_output", "web_search_call", "mcp_call",
                                   "tool_use", "tool_result", "message"])


@given(st.lists(st.dictionaries(_KEYS, _VALUES, max_size=5), min_size=1, max_size=6))
def test_any_message_shape_gives_steps_or_names_a_field(messages: list[dict[str, object]]) -> None:
    try:
        steps = to_steps(messages)
    except InvalidInput as err:
        assert err.field.startswith("messages[")
    else:
        assert [s.index for s in steps] == list(range(len(steps)))


def test_a_system_prompt_sent_apart_is_the_first_step() -> None:
    from graphmem.procedural.steps import trace_steps

    def t(**kw: object) -> TraceIn:
        return TraceIn.model_validate({"owner": "a", "started_at": "2024-05-15T12:00:00Z",
                                       "messages": [{"role": "user", "content": "x"}], **kw})

    plain = trace_steps(t())
    anthropic = trace_steps(t(system=[{"type": "text", "text": "You are an order agent."}]))
    gemini = trace_steps(t(system={"parts": [{"text": "Be brief."}]}))
    assert [s.kind for s in plain] == ["user"]
    assert [(s.index, s.kind) for s in anthropic] == [(0, "system"), (1, "user")]
    assert anthropic[0].text == "You are an order agent." and gemini[0].text == "Be brief."
    assert trace_steps(t(system="policy"))[0].text == "policy"
    assert trace_id(t()) != trace_id(t(system="policy"))  # part of what the run is
    with pytest.raises(InvalidInput) as err:
        trace_steps(t(system="p" * 11), "traces[2].messages", max_chars=10)
    assert err.value.field == "traces[2].system"
    with pytest.raises(InvalidInput) as err:
        trace_steps(t(messages=[{"role": "assistant", "content": "hi"}], system="p"))
    assert err.value.field == "messages"  # a system prompt is no request
