"""Sections and chunks of a parsed document (pure functions).

Headings nest into sections by level (a heading closes every open section of its level or
deeper). Paragraphs become chunks, the retrieval units: a paragraph within the bound is one
chunk; a longer one is cut at sentence boundaries into runs of sentences within the bound (a
sentence longer than the bound at word boundaries, a word longer than it into pieces); a short
paragraph (under `MERGE_BELOW` word pieces) is joined with the next paragraphs of its section,
within the bound. Every chunk is a span ``[start, end)`` of the document's text, so a citation
points at the exact text; sizes are counted with the embedder's own tokenizer (``count``), the
pieces of a span adding up (they are cut at white space, which no word piece crosses).
Chunks do not overlap unless asked: with ``overlap``, a chunk also starts with the last sentences
of the chunk before it in its section, within the bound.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from graphmem.documents.parse import Block, Parsed

Counter = Callable[[Sequence[str]], list[int]]
"""Word pieces of each text, the model's special tokens included (`token_counts`)."""
MAX_TOKENS = 250
"""Word pieces per chunk at most, special tokens included (the MiniLM window is 256)."""
MERGE_BELOW = 48
"""A chunk shorter than this takes in the next paragraph of its section (when both fit)."""
SPECIAL = 2
"""Special tokens each count includes ([CLS] and [SEP]): counted once per chunk."""
WORD_PIECE_CHARS = 64
"""A word longer than the bound is cut into pieces of this many characters."""
_SENTENCE_END = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bet al)(?<!\bFig)(?<!\bDr)(?<!\bMr)(?<!\bMrs)(?<!\bvs)(?<!\bNo)"
    r"[.!?…][\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class SectionSpan:
    order: int
    level: int
    path: tuple[str, ...]
    start: int
    end: int
    parent: int | None
    """The order of the enclosing section, if any."""


@dataclass(frozen=True)
class ChunkSpan:
    ordinal: int
    start: int
    end: int
    section: int | None
    """The order of the innermost section holding it (None: before any heading)."""
    tokens: int


@dataclass(frozen=True)
class Chunked:
    sections: list[SectionSpan]
    chunks: list[ChunkSpan]


def sections(parsed: Parsed) -> tuple[list[SectionSpan], list[int | None]]:
    """The sections, and for each block the order of the innermost section it falls in."""
    out: list[SectionSpan] = []
    stack: list[tuple[int, int, str]] = []  # (level, order, title)
    open_: dict[int, tuple[int, int, tuple[str, ...], int | None]] = {}
    where: list[int | None] = []
    ends: dict[int, int] = {}
    for block in parsed.blocks:
        if block.kind == "heading":
            while stack and stack[-1][0] >= block.level:
                ends[stack.pop()[1]] = block.start
            order = len(open_)
            parent = stack[-1][1] if stack else None
            path = (*(t for _, _, t in stack), block.title)
            open_[order] = (block.level, block.start, path, parent)
            stack.append((block.level, order, block.title))
        where.append(stack[-1][1] if stack else None)
    for order, (level, start, path, parent) in open_.items():
        out.append(SectionSpan(order, level, path, start, ends.get(order, len(parsed.text)),
                               parent))
    return out, where


def chunk(parsed: Parsed, count: Counter, max_tokens: int = MAX_TOKENS,
          merge_below: int = MERGE_BELOW, overlap: int = 0) -> Chunked:
    """Sections and chunks of ``parsed`` (see the module); no chunk counts more than
    ``max_tokens`` word pieces. With ``overlap``, each chunk also starts with up to that many
    sentences of the one before it in its section (`_overlapped`)."""
    spans, where = sections(parsed)
    text = parsed.text
    paragraphs = [(b, s) for b, s in zip(parsed.blocks, where, strict=True)
                  if b.kind == "paragraph"]
    counts = count([text[b.start:b.end] for b, _ in paragraphs]) if paragraphs else []
    out: list[ChunkSpan] = []
    run: list[tuple[int, int, int]] = []  # (start, end, tokens) of the chunk being built
    run_section: int | None = None

    def close() -> None:
        nonlocal run
        if run:
            tokens = sum(t - SPECIAL for _, _, t in run) + SPECIAL
            out.append(ChunkSpan(len(out), run[0][0], run[-1][1], run_section, tokens))
            run = []

    for (block, section), n in zip(paragraphs, counts, strict=True):
        if run and section != run_section:
            close()
        run_section = section
        pieces = [(block.start, block.end, n)] if n <= max_tokens else _cut(
            text, block, count, max_tokens)
        for start, end, t in pieces:
            size = sum(p - SPECIAL for _, _, p in run) + SPECIAL
            joins = run and size < merge_below and size + t - SPECIAL <= max_tokens
            if run and not joins:
                close()
            run.append((start, end, t))
            if len(pieces) > 1:
                close()  # runs of sentences are packed by `_cut` already
    close()
    return Chunked(spans, _overlapped(text, out, count, max_tokens, overlap) if overlap else out)


def _overlapped(text: str, chunks: list[ChunkSpan], count: Counter, max_tokens: int,
                overlap: int) -> list[ChunkSpan]:
    """``chunks``, each led by the last sentences of the one before it when both are in one
    section: up to ``overlap`` of them, never all of that chunk, and as many as the bound
    allows."""
    out = chunks[:1]
    for before, this in pairwise(chunks):
        start, tokens = this.start, this.tokens
        if before.section == this.section:
            sentences = sentence_spans(text, before.start, before.end)
            for n in range(min(overlap, len(sentences) - 1), 0, -1):
                counted = count([text[sentences[-n][0]:this.end]])[0]
                if counted <= max_tokens:
                    start, tokens = sentences[-n][0], counted
                    break
        out.append(ChunkSpan(this.ordinal, start, this.end, this.section, tokens))
    return out


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of ``text[start:end]`` as spans (white space between them left out)."""
    spans = []
    at = start
    for m in _SENTENCE_END.finditer(text, start, end):
        cut = m.start() + len(m.group(0).rstrip())
        spans.append((at, cut))
        at = m.end()
    spans.append((at, end))
    return [(s, e) for s, e in spans if e > s]


def _cut(text: str, block: Block, count: Counter, max_tokens: int) -> list[tuple[int, int, int]]:
    """A paragraph over the bound as runs of consecutive sentences within it."""
    pieces = _fitting(text, sentence_spans(text, block.start, block.end), count, max_tokens)
    runs: list[tuple[int, int, int]] = []
    for start, end, t in pieces:
        if runs and runs[-1][2] + t - SPECIAL <= max_tokens:
            runs[-1] = (runs[-1][0], end, runs[-1][2] + t - SPECIAL)
        else:
            runs.append((start, end, t))
    return runs


def _fitting(text: str, spans: list[tuple[int, int]], count: Counter,
             max_tokens: int) -> list[tuple[int, int, int]]:
    """``spans`` with their counts, each over the bound cut at words (a word over it into
    pieces of `WORD_PIECE_CHARS` characters)."""
    counts = count([text[s:e] for s, e in spans])
    out: list[tuple[int, int, int]] = []
    for (s, e), n in zip(spans, counts, strict=True):
        if n <= max_tokens:
            out.append((s, e, n))
            continue
        words = [(m.start(), m.end()) for m in _WORD.finditer(text, s, e)]
        if len(words) == 1:
            words = [(i, min(i + WORD_PIECE_CHARS, e)) for i in range(s, e, WORD_PIECE_CHARS)]
            if len(words) == 1:  # cannot be cut further; kept whole
                out.append((s, e, n))
                continue
        out.extend(_fitting(text, words, count, max_tokens))
    return out


def content_hash(text: str) -> str:
    """The hash an embedding is reused by: the same text embeds the same."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]
