"""Unit tests of graphmem.models: validation of what agents send."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from graphmem.models import MessageBatch, MessageIn, SearchRequest


def message(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "owner": "alice", "session_id": "s1", "speaker": "Caroline", "text": "hello",
        "timestamp": "2023-05-08T13:56:00Z",
    }
    return {**base, **changes}


def error_fields(info: pytest.ExceptionInfo[ValidationError]) -> set[tuple[Any, ...]]:
    return {tuple(e["loc"]) for e in info.value.errors()}


def test_valid_message() -> None:
    m = MessageIn(**message())
    assert m.timestamp == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert m.id is None
    assert m.metadata == {}


def test_naive_timestamp_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        MessageIn(**message(timestamp="2023-05-08T13:56:00"))
    assert error_fields(info) == {("timestamp",)}


def test_naive_datetime_object_rejected() -> None:
    with pytest.raises(ValidationError):
        MessageIn(**message(timestamp=datetime(2023, 5, 8, 13, 56)))


@pytest.mark.parametrize("bad", ["yesterday", "2023-13-45T00:00:00Z", "", "8 May 2023"])
def test_unparsable_timestamp_rejected(bad: str) -> None:
    with pytest.raises(ValidationError) as info:
        MessageIn(**message(timestamp=bad))
    assert error_fields(info) == {("timestamp",)}


@pytest.mark.parametrize(
    ("given", "utc"),
    [
        ("2023-05-08T15:56:00+02:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08T01:00:00-05:00", datetime(2023, 5, 8, 6, 0, tzinfo=UTC)),
        ("2023-05-08T00:30:00+01:00", datetime(2023, 5, 7, 23, 30, tzinfo=UTC)),
    ],
)
def test_offset_timestamp_converted_to_utc_same_instant(given: str, utc: datetime) -> None:
    ts = MessageIn(**message(timestamp=given)).timestamp
    assert ts == utc
    assert ts.utcoffset() == timedelta(0)
    assert ts == datetime.fromisoformat(given)  # the same instant


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
def test_empty_or_blank_text_rejected(text: str) -> None:
    with pytest.raises(ValidationError) as info:
        MessageIn(**message(text=text))
    assert error_fields(info) == {("text",)}


def test_text_is_stripped() -> None:
    assert MessageIn(**message(text="  hi  ")).text == "hi"


@pytest.mark.parametrize("field", ["owner", "session_id", "speaker", "id"])
def test_blank_identifiers_rejected(field: str) -> None:
    with pytest.raises(ValidationError):
        MessageIn(**message(**{field: "  "}))


def test_unknown_field_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        MessageIn(**message(tenant="someone-else"))
    assert error_fields(info) == {("tenant",)}
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_unknown_role_rejected_known_accepted() -> None:
    assert MessageIn(**message(role="assistant")).role == "assistant"
    with pytest.raises(ValidationError):
        MessageIn(**message(role="admin"))


def test_metadata_scalars_only() -> None:
    meta = {"a": 1, "b": "x", "c": 1.5, "d": True, "e": None}
    assert MessageIn(**message(metadata=meta)).metadata == meta
    with pytest.raises(ValidationError):
        MessageIn(**message(metadata={"nested": {"x": 1}}))


def test_batch_needs_at_least_one_message() -> None:
    with pytest.raises(ValidationError):
        MessageBatch(messages=[])
    assert len(MessageBatch(messages=[message()]).messages) == 1  # type: ignore[list-item]


# --- SearchRequest ------------------------------------------------------------------------------


def test_search_request_defaults() -> None:
    req = SearchRequest(query="q", owner="alice")
    assert req.k == 10
    assert req.method == "rrf_expand"
    assert req.expand is None  # the preset's window applies (default: 1 before, 2 after)
    assert req.max_messages is None


@pytest.mark.parametrize("k", [1, 200])
def test_search_k_bounds_accepted(k: int) -> None:
    assert SearchRequest(query="q", owner="alice", k=k).k == k


@pytest.mark.parametrize("k", [0, -1, 201])
def test_search_k_out_of_bounds_rejected(k: int) -> None:
    with pytest.raises(ValidationError) as info:
        SearchRequest(query="q", owner="alice", k=k)
    assert error_fields(info) == {("k",)}


@pytest.mark.parametrize("changes", [{"query": " "}, {"max_messages": 0}, {"method": "bm25"},
                                     {"expand": {"before": 21}}, {"extra": 1}])
def test_search_request_rejects(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchRequest(**{"query": "q", "owner": "alice", **changes})


def test_search_time_filters_must_be_aware() -> None:
    with pytest.raises(ValidationError):
        SearchRequest(query="q", owner="alice", time_from="2023-05-08T00:00:00")
    req = SearchRequest(query="q", owner="alice", time_from="2023-05-08T00:00:00Z")
    assert req.time_from == datetime(2023, 5, 8, tzinfo=UTC)
