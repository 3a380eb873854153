"""Rendering the context string an agent pastes into its prompt, and counting its tokens; what
text may reach a prompt (`prompt_safe`). Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from graphmem.messages import temporal
from graphmem.models import MessageLike

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}]")


def prompt_safe(text: str) -> str:
    """Text fit for a prompt: line breaks as ``\\n`` (``\\r\\n`` and a lone ``\\r`` become ``\\n``),
    and every other control character removed: NUL and the other C0 and C1 controls (tab
    stays), DEL, and the bidirectional controls (U+061C, U+200E/U+200F, U+202A-U+202E,
    U+2066-U+2069) that could reorder what a reader sees. Applied to rendered text only: the
    stored text is never changed."""
    return _UNSAFE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


class Renderable(MessageLike, Protocol):
    @property
    def session_id(self) -> str: ...


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks: a model-independent count close to BPE token counts for
    English (no tokenizer download needed). Used for budgets and reported as ``context_tokens``.
    The count of `_TOKEN`'s matches; a line of ASCII text is counted without the regex (a token
    never spans a line break): a rendered context in a third of the time. The middle dot of the
    rendered headers counts as the mark it is, as "." would: a context with it is ASCII then."""
    if not text.isascii():
        text = text.replace("\u00b7", ".")
        if not text.isascii():
            return sum(_ascii_tokens(line) if line.isascii() else len(_TOKEN.findall(line))
                       for line in text.split("\n"))
    return _ascii_tokens(text)


_CLASS = bytes(ord("a") if re.match(r"\w", chr(b)) else ord(" ") if chr(b).isspace()
               else ord("p") for b in range(128)) + b"p" * 128
"""Each ASCII byte's class under `_TOKEN`: ``a`` a word character, `` `` a space, ``p`` a mark."""


def _ascii_tokens(text: str) -> int:
    """`_TOKEN`'s matches in ASCII ``text``: its marks, and its runs of word characters."""
    classes = text.encode("ascii").translate(_CLASS)
    return classes.count(b"p") + len(classes.replace(b"p", b" ").split())


def _text(m: Renderable, normalise_time: bool) -> str:
    return temporal.annotate(m.text, m.timestamp) if normalise_time else m.text


def render(blocks: Sequence[Sequence[Renderable]], normalise_time: bool = True) -> str:
    """One paragraph per cluster: a header with session and date, then one line per message.
    With ``normalise_time``, relative time expressions show their resolved dates:
    "yesterday [2023-05-07]" (the stored text is never changed). The result is `prompt_safe`."""
    parts = []
    for block in blocks:
        if not block:
            continue
        first = block[0]
        header = f"## session {first.session_id} · {first.timestamp:%Y-%m-%d %H:%M} UTC"
        lines = [f"[{m.timestamp:%Y-%m-%d %H:%M}] {m.speaker}: {_text(m, normalise_time)}"
                 for m in block]
        parts.append("\n".join([header, *lines]))
    return prompt_safe("\n\n".join(parts))


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
    """A block of facts with their validity, best first; empty when there are none. The result
    is `prompt_safe`."""
    if not facts:
        return ""
    lines = ["## facts"]
    for f in facts:
        until = f" until {f.valid_to:%Y-%m-%d}" if f.valid_to else ""
        lines.append(f"- {f.subject} · {f.type}: {f.content} "
                     f"(valid from {f.valid_from:%Y-%m-%d}{until})")
    return prompt_safe("\n".join(lines))
