"""The export of an owner, without Neo4j: the cursor, a stored node as a record, and the walk of
pages through the kinds (every record once, in order, whatever the page size)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import neo4j.time
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.errors import InvalidInput
from graphmem.lifecycle import export, restore
from graphmem.lifecycle.export import KINDS, ExportKind, ExportRecord
from graphmem.models import MessageIn
from graphmem.procedural.models import TraceIn
from graphmem.procedural.steps import trace_steps

IDS = st.text(st.sampled_from("ab:/%é1"), min_size=1, max_size=6)
NOW = datetime(2026, 12, 5, tzinfo=UTC)


@given(st.sampled_from(KINDS), IDS)
def test_a_cursor_reads_back_whatever_the_id_holds(kind: ExportKind, id_: str) -> None:
    assert export.parse_cursor(export.cursor(kind, id_)) == (KINDS.index(kind), id_)


@pytest.mark.parametrize("after", ["message", "nothing:x", ":x", "Message:x"])
def test_a_cursor_naming_no_kind_is_refused_naming_after(after: str) -> None:
    with pytest.raises(InvalidInput) as err:
        export.parse_cursor(after)
    assert err.value.field == "after"


def test_properties_leave_out_index_helpers_decode_json_and_write_times_in_utc() -> None:
    stored = {
        "tenant": "t", "embedding": [0.1], "caption": "c", "scope": "s", "search_text": "x",
        "metadata_pairs": ["[\"a\",1]"], "metadata_tokens": "tok", "content_norm": "n",
        "id": "m1", "text": "hello", "metadata_json": '{"a": 1}', "steps_json": "not json",
        "timestamp": datetime(2026, 3, 12, 14, 5, tzinfo=timezone(timedelta(hours=1))),
        "event_starts": [neo4j.time.Date(2026, 3, 10)], "day": date(2026, 3, 11),
        "score": float("nan"), "deleted": False, "count": 3,
    }
    assert export.properties(stored) == {
        "count": 3, "day": "2026-03-11", "deleted": False, "event_starts": ["2026-03-10"],
        "id": "m1", "metadata": {"a": 1}, "score": None, "steps": "not json", "text": "hello",
        "timestamp": "2026-03-12T13:05:00Z"}


def test_a_record_sorts_its_links() -> None:
    row = {"id": "f1", "properties": {"content": "x"}, "links": [
        {"type": "SUPPORTED_BY", "direction": "out", "kind": "message", "id": "m2",
         "properties": {"at": NOW}},
        {"type": "SUPERSEDES", "direction": "out", "kind": "fact", "id": "f0",
         "properties": None},
        {"type": "SUPPORTED_BY", "direction": "out", "kind": "message", "id": "m1",
         "properties": {}}]}
    rec = export.record("fact", row)
    assert [(x.type, x.id) for x in rec.links] == [
        ("SUPERSEDES", "f0"), ("SUPPORTED_BY", "m1"), ("SUPPORTED_BY", "m2")]
    assert rec.links[2].properties == {"at": "2026-12-05T00:00:00Z"}


def _store(sizes: list[int]) -> dict[ExportKind, list[str]]:
    return {kind: sorted(f"{kind[0]}{i:03d}" for i in range(n))
            for kind, n in zip(KINDS, sizes, strict=False)}


class Reader:
    """A store of ids per kind, read as `queries/export/<kind>` reads it; counts its reads."""

    def __init__(self, ids: dict[ExportKind, list[str]]) -> None:
        self.ids = ids
        self.reads: list[tuple[ExportKind, str, int]] = []

    def __call__(self, kind: ExportKind, after: str, limit: int) -> list[dict[str, Any]]:
        self.reads.append((kind, after, limit))
        found = [i for i in self.ids.get(kind, []) if i > after][:limit]
        return [{"id": i, "properties": {"id": i}, "links": []} for i in found]


@given(st.lists(st.integers(0, 7), min_size=len(KINDS), max_size=len(KINDS)),
       st.integers(1, 9))
def test_pages_give_every_record_once_in_export_order(sizes: list[int], limit: int) -> None:
    ids = _store(sizes)
    read = Reader(ids)
    got: list[tuple[str, str]] = []
    after, pages = "", 0
    while True:
        page = export.page(read, "alice", after, limit, NOW)
        pages += 1
        assert len(page.records) <= limit
        assert len({r.kind for r in page.records}) <= len(KINDS)
        got += [(r.kind, r.id) for r in page.records]
        if page.next is None:
            assert len(page.records) < limit  # a full page always says where to go on
            break
        assert len(page.records) == limit
        after = page.next
    assert got == [(kind, i) for kind in KINDS for i in ids.get(kind, [])]
    assert pages == len(got) // limit + 1
    # a page reads each kind at most once, and never more than it has room for
    assert all(n <= limit for _, _, n in read.reads)


def test_a_page_reads_on_from_its_cursors_kind() -> None:
    read = Reader(_store([3, 0, 2, 0, 0, 0, 0, 0, 4]))
    page = export.page(read, "alice", "episode:e000", 10, NOW)
    assert [(r.kind, r.id) for r in page.records] == [
        ("episode", "e001"), ("skill", "s000"), ("skill", "s001"), ("skill", "s002"),
        ("skill", "s003")]
    assert page.next is None and page.exported_at == NOW
    assert read.reads[0] == ("episode", "e000", 10)
    assert [k for k, _, _ in read.reads] == list(KINDS[2:])


def _as_exported(trace: TraceIn) -> list[ExportRecord]:
    """A run as its export holds it: the trace and its steps (as the store keeps them)."""
    steps = trace_steps(trace)
    props = {"id": trace.id, "owner": trace.owner, "started_at": "2026-03-01T10:00:00Z",
             "outcome": trace.outcome, "conditions": trace.conditions, "score": trace.score}
    return [ExportRecord(kind="trace", id=str(trace.id), properties=props)] + [
        ExportRecord(kind="step", id=f"{trace.id}#{s.index}", properties={
            **s.model_dump(mode="json", exclude_none=True), "trace_id": trace.id})
        for s in reversed(steps)]  # any order: the index orders them


def _call(cid: str | None, name: str, args: Any) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


RUNS: list[list[dict[str, Any]]] = [
    [  # OpenAI: text and calls in one message, results, an error, a timestamp
        {"role": "system", "content": "You book flights."},
        {"role": "user", "content": "Cancel booking ABC", "timestamp": "2026-03-01T10:00:00Z"},
        {"role": "assistant", "content": "Looking it up.", "tool_calls": [
            _call("c1", "get_booking", '{"id": "ABC"}'), _call("c2", "get_user", {"u": 1})]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"status\": \"open\"}"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: user not found"},
        {"role": "assistant", "content": None, "tool_calls": [
            _call("c3", "cancel_booking", "not json")]},
        {"role": "tool", "tool_call_id": "c3", "name": "cancel_booking", "content": "done"},
        {"role": "assistant", "content": "Cancelled."}],
    [  # Anthropic: tool_use blocks, results with is_error, text beside results
        {"role": "user", "content": "Restore staging"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "On it."},
            {"type": "tool_use", "id": "t1", "name": "restore", "input": {"env": "staging"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": True},
            {"type": "text", "text": "and check health"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "check_health", "input": {}}]}],
    [  # Gemini: calls and responses without ids
        {"role": "user", "parts": [{"text": "Weather in Porto?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"c": "Porto"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather",
                                                         "response": {"t": 21}}}]},
        {"role": "model", "parts": [{"text": "21 degrees."}]}],
]


@pytest.mark.parametrize("messages", RUNS)
def test_an_exported_run_reads_back_into_the_same_steps(messages: list[dict[str, Any]]) -> None:
    sent = TraceIn.model_validate({"id": "r1", "owner": "bot", "outcome": "success",
                                   "started_at": "2026-03-01T10:00:00Z", "messages": messages,
                                   "conditions": {"model": "m"}, "score": 1.0})
    back = restore.traces_of(_as_exported(sent))
    assert len(back) == 1 and len(back[0].messages) <= len(messages)
    assert trace_steps(back[0]) == trace_steps(sent)
    assert (back[0].id, back[0].owner, back[0].outcome, back[0].conditions, back[0].score) == (
        "r1", "bot", "success", {"model": "m"}, 1.0)


def test_exported_messages_are_sent_again_as_they_were() -> None:
    sent = MessageIn.model_validate({"id": "m/1", "owner": "alice", "session_id": "s",
                                     "speaker": "alice", "role": "user", "text": "hi",
                                     "timestamp": "2026-03-12T14:05:00+01:00",
                                     "metadata": {"a": [1][0], "b": None}})
    stored = {**sent.model_dump(mode="json"), "recorded_at": "2026-12-05T10:00:00Z",
              "batch": "x", "content_hash": "h"}
    rec = export.record("message", {"id": "m/1", "properties": {
        **stored, "metadata_json": '{"a": 1, "b": null}', "metadata": None}, "links": []})
    assert restore.messages_of([rec, export.record("entity", {
        "id": "alice", "properties": {"name": "alice"}, "links": []})]) == [sent]
