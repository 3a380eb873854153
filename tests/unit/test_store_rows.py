"""`graphmem.store.connection.rows`: records to rows exactly as ``native(record.data())`` makes
them, on the fast path (plain values) and off it (temporal, spatial and other driver values); and
`_translated`: which driver failures become graphmem's 503 errors."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import neo4j
import pytest
from neo4j.spatial import CartesianPoint
from neo4j.time import Date, DateTime, Duration

from graphmem.errors import Contended, StoreBusy, StoreUnavailable
from graphmem.store import connection as core
from graphmem.store.connection import _retrying_transient, _translated, native, rows
from graphmem.store.core import Store

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


def test_a_contended_transaction_runs_again_and_is_a_503_once_the_limit_is_spent() -> None:
    calls: list[int] = []

    def raced() -> str:
        calls.append(1)
        if len(calls) < 4:
            raise Contended("could not enqueue ['form_session-x'] in 5 rounds")
        return "committed"

    assert _retrying_transient(raced, limit_s=10) == "committed" and len(calls) == 4

    def always() -> str:
        calls.append(1)
        raise Contended("could not enqueue")

    calls.clear()
    with pytest.raises(StoreBusy):  # Contended is a StoreBusy: a 503, nothing committed
        _retrying_transient(always, limit_s=0.5)
    assert len(calls) >= 2


def test_other_failures_are_not_tried_again() -> None:
    calls: list[int] = []

    def down() -> str:
        calls.append(1)
        raise neo4j.exceptions.ServiceUnavailable("refused")  # the driver retried it already

    with pytest.raises(neo4j.exceptions.ServiceUnavailable):
        _retrying_transient(down, limit_s=10)
    assert calls == [1]


class _FakeSession:
    def __init__(self, outcomes: list[Exception | list[str]], modes: list[str], mode: str) -> None:
        self._outcomes, self._modes, self._mode = outcomes, modes, mode

    def __enter__(self) -> _FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, query: str, params: dict[str, object]) -> list[str]:
        self._modes.append(self._mode)
        outcome = self._outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


class _FakeDriver:
    execute_query_bookmark_manager = None

    def __init__(self, outcomes: list[Exception | list[str]]) -> None:
        self.outcomes = outcomes
        self.modes: list[str] = []

    def session(self, *, database: str, default_access_mode: str,
                bookmark_manager: object) -> _FakeSession:
        return _FakeSession(self.outcomes, self.modes, default_access_mode)


def _store_on(driver: _FakeDriver) -> Store:
    store = Store.__new__(Store)
    store._driver, store._db = driver, "neo4j"  # type: ignore[assignment]
    return store


def test_a_read_is_one_auto_commit_read_tried_again_while_the_server_is_unreachable() -> None:
    driver = _FakeDriver([neo4j.exceptions.ServiceUnavailable("refused"),
                          neo4j.exceptions.SessionExpired("gone"), ["row"]])
    assert _store_on(driver)._read("RETURN 1", {}) == ["row"]
    assert driver.modes == [neo4j.READ_ACCESS] * 3


def test_a_read_gives_up_once_the_driver_retry_time_is_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "DRIVER_RETRY_S", 0.5)
    driver = _FakeDriver([neo4j.exceptions.ServiceUnavailable("refused")] * 50)
    started = time.monotonic()
    with pytest.raises(neo4j.exceptions.ServiceUnavailable):
        _store_on(driver)._read("RETURN 1", {})
    assert time.monotonic() - started < 1.5 and 2 <= len(driver.modes) < 10


def test_a_client_error_of_a_read_is_not_tried_again() -> None:
    driver = _FakeDriver([neo4j.exceptions.ClientError("syntax"), ["row"]])
    with pytest.raises(neo4j.exceptions.ClientError):
        _store_on(driver)._read("RETURN", {})
    assert len(driver.modes) == 1
