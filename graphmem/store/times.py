"""Times read as integers: the reads on hot paths return ``<name>_us`` (microseconds since the
epoch) instead of a datetime, which the driver turns into a Python object in about 75 us (an
integer in about 1); `epoch_times` makes them aware UTC datetimes again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_epoch_us(value: int | None) -> datetime | None:
    """Microseconds since the epoch (or null) as an aware UTC datetime (or None)."""
    return EPOCH + timedelta(microseconds=value) if value is not None else None


def epoch_times(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with each ``<name>_us`` (microseconds since the epoch, or null) turned into
    ``<name>``, an aware UTC datetime (or None)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key[-3:] == "_us":  # one pass over the row
            out[key[:-3]] = from_epoch_us(value)
        else:
            out[key] = value
    return out
