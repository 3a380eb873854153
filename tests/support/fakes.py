"""Small stand-ins shared by unit tests."""

from __future__ import annotations

from collections.abc import Sequence


class FakeEmbedder:
    """Every text embeds to the same unit vector."""

    name = "fake"
    dimensions = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]
