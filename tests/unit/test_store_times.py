"""`epoch_times` and the windows' message lists: integer times read back as aware UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from graphmem.store.tenant import WINDOW_MESSAGE, window_message
from graphmem.store.times import EPOCH, epoch_times


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1),
                    timezones=st.just(UTC)))
def test_microseconds_since_the_epoch_become_the_same_instant(moment: datetime) -> None:
    us = (moment - EPOCH) // timedelta(microseconds=1)
    row = epoch_times({"id": "m1", "timestamp_us": us, "done_at_us": None, "text": "hi"})
    assert row == {"id": "m1", "timestamp": moment, "done_at": None, "text": "hi"}
    assert row["timestamp"].tzinfo is UTC


def test_a_windows_message_list_becomes_a_row_with_aware_times() -> None:
    moment = datetime(2023, 5, 8, 13, 56, 30, 123456, tzinfo=UTC)
    us = (moment - EPOCH) // timedelta(microseconds=1)
    values = ["m1", "ann", "s1", "Ann", "user", "hi", 3, us, None, '{"a": 1}', ['["a",1]']]
    row = window_message(values)
    assert tuple(row) == WINDOW_MESSAGE
    assert row == {"id": "m1", "owner": "ann", "session_id": "s1", "speaker": "Ann",
                   "role": "user", "text": "hi", "batch_index": 3, "timestamp": moment,
                   "recorded_at": None, "metadata_json": '{"a": 1}',
                   "metadata_pairs": ['["a",1]']}
