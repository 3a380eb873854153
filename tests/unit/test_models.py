"""Unit tests of graphmem.models: validation of what agents send."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from graphmem.facts.models import ObservationIn, ProfileOp
from graphmem.models import (
    DATETIME_PATTERN,
    MAX_TIME,
    MIN_TIME,
    IsoDate,
    MessageBatch,
    MessageIn,
    SearchRequest,
    utc_datetime,
)


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


# --- UtcDatetime / IsoDate: the one rule for every datetime and date a caller sends -------------


@pytest.mark.parametrize(("given", "expected"), [
    ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("2023-05-08t13:56:00z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("2023-05-08 13:56+02:00", datetime(2023, 5, 8, 11, 56, tzinfo=UTC)),
    ("2023-05-08T13:56:00.123456789-0500", datetime(2023, 5, 8, 18, 56, 0, 123456, tzinfo=UTC)),
    ("2023-05-08T13:56:00+18:00", datetime(2023, 5, 7, 19, 56, tzinfo=UTC)),
    ("2023-05-08T13:56:00-18:00", datetime(2023, 5, 9, 7, 56, tzinfo=UTC)),
    ("0001-01-01T00:00:00Z", MIN_TIME),
    ("0001-01-01T05:00:00+05:00", MIN_TIME),
    ("8999-12-31T23:59:59.999999Z", MAX_TIME - timedelta(microseconds=1)),
    (datetime(2023, 5, 8, 15, 56, tzinfo=timezone(timedelta(hours=2))),
     datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
])
def test_utc_datetime_accepts_iso_with_offset(given: Any, expected: datetime) -> None:
    got = utc_datetime(given)
    assert got == expected and got.utcoffset() == timedelta(0)


@pytest.mark.parametrize(("given", "says"), [
    (1700000000, "string"), (0.5, "string"), (True, "string"), (None, "string"),
    ("1700000000", "ISO 8601"), ("0.5", "ISO 8601"), ("", "ISO 8601"),
    ("2023-05-08", "date alone"), ("2023-05-08T13:56:00", "offset"),
    ("20230508T135600Z", "ISO 8601"), ("2023-W19-1T13:56:00Z", "ISO 8601"),
    ("2023-05-08_13:56:00Z", "ISO 8601"), ("2023-05-08T13:56:00+02", "ISO 8601"),
    ("2023-05-08T13:56:00+02:60", "ISO 8601"), ("٢٠٢٣-05-08T13:56:00Z", "ISO 8601"),
    ("2023-02-30T00:00:00Z", "calendar"), ("2023-05-08T24:00:00Z", "calendar"),
    ("2023-05-08T13:56:00+18:01", "offset"), ("2023-05-08T13:56:00-23:59", "offset"),
    ("0001-01-01T00:00:00+05:00", "range"), ("9999-12-31T23:00:00-05:00", "range"),
    ("9000-01-01T00:00:00Z", "range"), ("9999-12-31T23:59:59Z", "range"),
    (datetime(2023, 5, 8, 13, 56), "offset"),
    (datetime(2023, 5, 8, tzinfo=timezone(timedelta(hours=23))), "offset"),
    (date(2023, 5, 8), "string"),
])
def test_utc_datetime_refuses(given: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        utc_datetime(given)


@pytest.mark.parametrize("field", ["timestamp"])
@pytest.mark.parametrize("bad", [1700000000, "1700000000", "2023-05-08T13:56:00+19:00",
                                 "0001-01-01T00:00:00+00:01"])
def test_message_timestamp_uses_the_one_rule(field: str, bad: Any) -> None:
    with pytest.raises(ValidationError) as info:
        MessageIn(**message(**{field: bad}))
    assert error_fields(info) == {(field,)}
    with pytest.raises(ValidationError) as info:
        MessageIn.model_validate_json(json.dumps(message(**{field: bad})))
    assert error_fields(info) == {(field,)}


@pytest.mark.parametrize("field", ["time_from", "time_to", "as_of"])
def test_search_datetimes_use_the_one_rule(field: str) -> None:
    with pytest.raises(ValidationError) as info:
        SearchRequest(query="q", owner="a", **{field: 0})
    assert error_fields(info) == {(field,)}
    req = SearchRequest(query="q", owner="a", **{field: "2023-05-08T15:56:00+02:00"})
    assert getattr(req, field) == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_fact_datetimes_use_the_one_rule() -> None:
    base = {"owner": "a", "subject": "s", "type": "t", "content": "c"}
    for field in ("valid_from", "valid_to"):
        with pytest.raises(ValidationError) as info:
            ObservationIn(**base, **{field: "1700000000"})
        assert error_fields(info) == {(field,)}
    obs = ObservationIn(**base, valid_from="2026-01-01T02:00:00+02:00")
    assert obs.valid_from == datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError) as info:
        ProfileOp(op="ADD", owner="a", key="k", value="v", valid_from=1.5)
    assert error_fields(info) == {("valid_from",)}


def test_utc_datetime_json_schema_is_a_date_time() -> None:
    schema = SearchRequest.model_json_schema()["properties"]["time_to"]["anyOf"][0]
    assert schema == {"type": "string", "format": "date-time", "pattern": DATETIME_PATTERN}


@pytest.mark.parametrize(("given", "expected"), [
    ("2024-02-29", date(2024, 2, 29)), ("9999-12-31", date(9999, 12, 31)),
    (date(2024, 1, 1), date(2024, 1, 1)),
])
def test_iso_date_accepts(given: Any, expected: date) -> None:
    assert TypeAdapter(IsoDate).validate_python(given) == expected


@pytest.mark.parametrize("given", [0, "0", "20240101", "2024-1-1", "2023-02-29", "",
                                   "2024-01-01T00:00:00Z", datetime(2024, 1, 1, tzinfo=UTC),
                                   1.5, "٢٠٢٤-01-01"])
def test_iso_date_refuses(given: Any) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(IsoDate).validate_python(given)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_metadata_floats_must_be_finite(value: float) -> None:
    with pytest.raises(ValidationError) as info:
        MessageIn(**message(metadata={"x": value}))
    assert error_fields(info) == {("metadata", "x")}
