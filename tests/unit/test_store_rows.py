"""`graphmem.store.core.rows`: records to rows exactly as ``native(record.data())`` makes them,
on the fast path (plain values) and off it (temporal, spatial and other driver values); and
`_translated`: which driver failures become graphmem's 503 errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import neo4j
import pytest
from neo4j.spatial import CartesianPoint
from neo4j.time import Date, DateTime, Duration

from graphmem.errors import StoreBusy, StoreUnavailable
from graphmem.store.core import _retrying_transient, _translated, native, rows

AT = DateTime(2023, 5, 8, 13, 56, 0, tzinfo=timezone(timedelta(hours=2)))
RECORDS = [
    {"fetched": 240, "hits": [{"id": "m1", "score": 0.93}, {"id": "m2", "score": 0.5}]},
    {"id": "m1", "text": "hi", "flag": True, "none": None, "ids": ["a", "b"], "at": AT},
    {"message": {"id": "m1", "timestamp": AT, "later": [{"recorded_at": AT}]}},
    {"day": Date(2023, 5, 8), "took": Duration(days=1), "where": CartesianPoint((1.0, 2.0))},
    {"nested": [[1, 2], {"p": CartesianPoint((0.0, 1.0)), "at": AT}]},
]


@pytest.mark.parametrize("values", RECORDS)
def test_rows_are_what_record_data_and_native_give(values: dict[str, object]) -> None:
    records = [neo4j.Record(values), neo4j.Record(values)]
    got = rows(records)
    assert got == [native(r.data()) for r in records]
    assert [list(r) for r in got] == [list(values)] * 2  # the columns, in order


def test_date_times_become_aware_utc_datetimes() -> None:
    [row] = rows([neo4j.Record({"at": AT, "deep": [{"at": AT}]})])
    assert row["at"] == row["deep"][0]["at"] == datetime(2023, 5, 8, 11, 56, tzinfo=UTC)
    assert row["at"].tzinfo is UTC


def test_no_records_no_rows() -> None:
    assert rows([]) == []


# --- driver failures, translated ------------------------------------------------------------
@pytest.mark.parametrize(("raised", "expected"), [
    (neo4j.exceptions.ServiceUnavailable("down"), StoreUnavailable),
    (neo4j.exceptions.TransientError("deadlock"), StoreBusy),
])
def test_driver_failures_become_503_errors(raised: Exception, expected: type) -> None:
    with pytest.raises(expected) as info, _translated():
        raise raised
    assert isinstance(info.value, StoreUnavailable) and info.value.status == 503


def test_a_client_error_is_not_translated() -> None:
    with pytest.raises(neo4j.exceptions.ClientError), _translated():
        raise neo4j.exceptions.ClientError("syntax")


def test_a_transient_abort_is_tried_again_until_the_limit() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise neo4j.exceptions.TransientError("deadlock")
        return "committed"

    assert _retrying_transient(flaky, limit_s=10) == "committed" and len(calls) == 3

    def stuck() -> str:
        calls.append(1)
        raise neo4j.exceptions.TransientError("deadlock")

    calls.clear()
    with pytest.raises(neo4j.exceptions.TransientError):
        _retrying_transient(stuck, limit_s=1.5)
    assert 1 <= len(calls) <= 2


def test_other_failures_are_not_tried_again() -> None:
    calls: list[int] = []

    def down() -> str:
        calls.append(1)
        raise neo4j.exceptions.ServiceUnavailable("refused")  # the driver retried it already

    with pytest.raises(neo4j.exceptions.ServiceUnavailable):
        _retrying_transient(down, limit_s=10)
    assert calls == [1]
