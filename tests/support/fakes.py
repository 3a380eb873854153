"""Small stand-ins shared by unit tests."""

from __future__ import annotations

from collections.abc import Sequence


class FakeEmbedder:
    """Every text embeds to the same unit vector."""

    name = "fake"
    dimensions = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class Clock:
    """A clock a test moves by hand (``clock.now += 1``): a stand-in for time.monotonic."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
