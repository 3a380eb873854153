"""Rendering the context string an agent pastes into its prompt, and counting its tokens. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class Renderable(Protocol):
    @property
    def speaker(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def timestamp(self) -> datetime: ...
    @property
    def session_id(self) -> str: ...


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks: a model-independent count close to BPE token counts for
    English (no tokenizer download needed). Used for budgets and reported as ``context_tokens``.
    """
    return len(_TOKEN.findall(text))


def render(blocks: Sequence[Sequence[Renderable]]) -> str:
    """One paragraph per cluster: a header with session and date, then one line per message."""
    parts = []
    for block in blocks:
        if not block:
            continue
        first = block[0]
        header = f"## session {first.session_id} · {first.timestamp:%Y-%m-%d %H:%M} UTC"
        lines = [f"[{m.timestamp:%Y-%m-%d %H:%M}] {m.speaker}: {m.text}" for m in block]
        parts.append("\n".join([header, *lines]))
    return "\n\n".join(parts)
