"""Rendering the context string an agent pastes into its prompt, and counting its tokens. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from graphmem import temporal
from graphmem.models import MessageLike

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class Renderable(MessageLike, Protocol):
    @property
    def session_id(self) -> str: ...


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks: a model-independent count close to BPE token counts for
    English (no tokenizer download needed). Used for budgets and reported as ``context_tokens``.
    """
    return len(_TOKEN.findall(text))


def _text(m: Renderable, normalise_time: bool) -> str:
    return temporal.annotate(m.text, m.timestamp) if normalise_time else m.text


def render(blocks: Sequence[Sequence[Renderable]], normalise_time: bool = True) -> str:
    """One paragraph per cluster: a header with session and date, then one line per message.
    With ``normalise_time``, relative time expressions show their resolved dates:
    "yesterday [2023-05-07]" (the stored text is never changed)."""
    parts = []
    for block in blocks:
        if not block:
            continue
        first = block[0]
        header = f"## session {first.session_id} · {first.timestamp:%Y-%m-%d %H:%M} UTC"
        lines = [f"[{m.timestamp:%Y-%m-%d %H:%M}] {m.speaker}: {_text(m, normalise_time)}"
                 for m in block]
        parts.append("\n".join([header, *lines]))
    return "\n\n".join(parts)


class FactLike(Protocol):
    @property
    def subject(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def valid_from(self) -> datetime: ...
    @property
    def valid_to(self) -> datetime | None: ...


def render_facts(facts: Sequence[FactLike]) -> str:
    """A block of facts with their validity, best first; empty when there are none."""
    if not facts:
        return ""
    lines = ["## facts"]
    for f in facts:
        until = f" until {f.valid_to:%Y-%m-%d}" if f.valid_to else ""
        lines.append(f"- {f.subject} · {f.type}: {f.content} "
                     f"(valid from {f.valid_from:%Y-%m-%d}{until})")
    return "\n".join(lines)
