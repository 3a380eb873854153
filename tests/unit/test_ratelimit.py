"""`TokenBuckets`: a key's requests paced at its rate with bursts, keys apart."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.ratelimit import TokenBuckets
from tests.support.fakes import Clock


def test_a_burst_then_the_rate() -> None:
    clock = Clock(0.0)
    buckets = TokenBuckets(3, clock)
    assert [buckets.take("k", 2.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("k", 2.0) == pytest.approx(0.5)  # the next token in half a second
    assert buckets.take("other", 2.0) == 0.0  # keys apart
    clock.now = 0.5
    assert buckets.take("k", 2.0) == 0.0
    assert buckets.take("k", 2.0) == pytest.approx(0.5)
    clock.now = 100.0  # refilled, never past the burst
    assert [buckets.take("k", 2.0) for _ in range(4)][-1] > 0


def test_rate_zero_is_no_limit_and_a_burst_needs_one() -> None:
    buckets = TokenBuckets(1, Clock(0.0))
    assert all(buckets.take("k", 0.0) == 0.0 for _ in range(1000))
    with pytest.raises(ValueError):
        TokenBuckets(0, Clock(0.0))


def test_the_oldest_bucket_goes_first() -> None:
    clock = Clock(0.0)
    buckets = TokenBuckets(1, clock, max_keys=2)
    for key in ("a", "b"):
        assert buckets.take(key, 1.0) == 0.0
    assert buckets.take("a", 1.0) > 0  # a is used again: b is now the oldest
    assert buckets.take("c", 1.0) == 0.0  # b goes
    assert buckets.take("b", 1.0) == 0.0  # starts full again
    assert buckets.take("a", 1.0) == 0.0  # a went for b's return: full again too


@given(st.floats(0.5, 50), st.integers(1, 20),
       st.lists(st.floats(0, 0.5), min_size=1, max_size=200))
def test_never_more_than_the_burst_plus_the_rate(rate: float, burst: int,
                                                 gaps: list[float]) -> None:
    clock = Clock(0.0)
    buckets = TokenBuckets(burst, clock)
    allowed = 0
    for gap in gaps:
        clock.now += gap
        wait = buckets.take("k", rate)
        assert wait >= 0
        allowed += wait == 0
    assert allowed <= burst + rate * clock.now + 1e-6
