"""Requests per second per API key: one token bucket per key, holding at most ``burst`` tokens
and refilled at the key's rate; a request takes one token or waits for the next. Pure: the
clock is given, and the buckets live in one process (each API process keeps its own).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

MAX_KEYS = 100_000
"""Buckets kept at once; the one used longest ago goes first (it was full again by then, unless
its key sends under a token per (MAX_KEYS / request rate) seconds, then it starts full)."""


@dataclass
class _Bucket:
    tokens: float
    at: float


class TokenBuckets:
    """One bucket per key. Not thread-safe: the API calls it from its event loop only."""

    def __init__(self, burst: int, clock: Callable[[], float],
                 max_keys: int = MAX_KEYS) -> None:
        if burst < 1:
            raise ValueError(f"burst is at least 1, not {burst}")
        self.burst = burst
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, key: str, rate: float) -> float:
        """0.0 when a request of ``key`` may go now (its token taken); else the seconds until
        the next token (nothing taken). ``rate`` is in requests per second; 0 means no limit."""
        if rate <= 0:
            return 0.0
        now = self._clock()
        bucket = self._buckets.pop(key, None) or _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * rate)
        bucket.at = now
        self._buckets[key] = bucket  # the most recently used last
        if len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / rate
