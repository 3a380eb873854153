"""Chunking (pure): offsets round-trip to the source text, no chunk exceeds the bound (counted
by the embedder's own tokenizer), sections nest by heading level; properties by hypothesis."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.documents.chunk import chunk, sentence_spans
from graphmem.documents.parse import parse


@cache
def _tokenizer() -> object:
    from graphmem.config import Settings
    from graphmem.embeddings import embedder_for

    return embedder_for(Settings())


def count(texts: Sequence[str]) -> list[int]:
    embedder = _tokenizer()
    return embedder.count_tokens(texts)  # type: ignore[attr-defined, no-any-return]


def _words(texts: Sequence[str]) -> list[int]:
    """A stand-in tokenizer: a word piece per word and punctuation mark, plus two specials."""
    import re

    return [len(re.findall(r"\w+|[^\w\s]", t)) + 2 for t in texts]


WORD = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
               max_size=12).filter(lambda w: w.strip() == w and w)
SENTENCE = st.lists(WORD, min_size=1, max_size=40).map(lambda ws: " ".join(ws) + ".")
PARAGRAPH = st.lists(SENTENCE, min_size=1, max_size=12).map(" ".join)
HEADING = st.tuples(st.integers(1, 4), st.from_regex(r"[A-Z][a-z]{2,10}", fullmatch=True))
DOC = st.lists(st.one_of(PARAGRAPH, HEADING), min_size=1, max_size=12)


def _markdown(parts: list[object]) -> str:
    return "\n\n".join(f"{'#' * p[0]} {p[1]}" if isinstance(p, tuple) else str(p)
                       for p in parts) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOC, st.integers(12, 80), st.sampled_from(["text/markdown", "text/plain"]),
       st.sampled_from([0, 0, 1, 2]))
def test_offsets_round_trip_and_no_chunk_exceeds_the_bound(parts: list[object], bound: int,
                                                          media: str, overlap: int) -> None:
    source = _markdown(parts)
    if not source.strip() or not any(isinstance(p, str) and p.strip() for p in parts):
        return
    try:
        parsed = parse(source, media)
    except Exception as exc:  # only a text with nothing in it may be refused
        assert "holds no text" in str(exc)
        return
    assert parsed.text == source  # offsets point into the source itself
    chunked = chunk(parsed, _words, bound, overlap=overlap)
    plain = chunk(parsed, _words, bound).chunks
    previous: tuple[int, int] | None = None
    for c, alone in zip(chunked.chunks, plain, strict=True):
        text = source[c.start:c.end]
        assert text and text == text.strip()
        assert c.end == alone.end and c.start <= alone.start and c.section == alone.section
        if previous is not None:  # in reading order; overlapping only when asked
            assert c.start > previous[0] and c.end > previous[1]
            assert c.start >= previous[1] or (overlap and c.start < alone.start)
        previous = (c.start, c.end)
        assert _words([text])[0] <= bound or len(text.split()) == 1
        assert c.tokens == (_words([text])[0] if c.start < alone.start else alone.tokens)
    covered = "".join(source[alone.start:alone.end] for alone in plain)
    paragraphs = "".join(source[b.start:b.end] for b in parsed.blocks if b.kind == "paragraph")
    assert "".join(covered.split()) == "".join(paragraphs.split())  # no word lost


@pytest.mark.parametrize("bound", [32, 64, 250])
def test_the_embedders_tokenizer_bounds_real_text(bound: int) -> None:
    text = ("The tide rises twice a day. " * 30 + "\n") * 3 + "Short line.\n"
    chunked = chunk(parse(text, "text/plain"), count, bound)
    counts = count([text[c.start:c.end] for c in chunked.chunks])
    assert max(counts) <= bound
    assert [c.tokens for c in chunked.chunks] == counts  # the pieces add up exactly


def test_sections_nest_by_level() -> None:
    md = "# A\n\npara a\n\n## B\n\npara b\n\n### C\n\npara c\n\n## D\n\npara d\n\n# E\n\npara e\n"
    chunked = chunk(parse(md, "text/markdown"), _words, 250, merge_below=0)
    paths = [s.path for s in chunked.sections]
    assert paths == [("A",), ("A", "B"), ("A", "B", "C"), ("A", "D"), ("E",)]
    assert [s.parent for s in chunked.sections] == [None, 0, 1, 0, None]
    assert chunked.sections[1].end == md.index("## D")
    assert [md[c.start:c.end] for c in chunked.chunks] == [
        "para a", "para b", "para c", "para d", "para e"]
    assert [c.section for c in chunked.chunks] == [0, 1, 2, 3, 4]


def test_short_paragraphs_join_the_next_of_their_section_only() -> None:
    md = "# A\n\nOne.\n\nTwo.\n\n# B\n\nThree.\n"
    chunked = chunk(parse(md, "text/markdown"), _words, 250)
    assert [md[c.start:c.end] for c in chunked.chunks] == ["One.\n\nTwo.", "Three."]


def test_sentences_split_at_their_ends_not_at_abbreviations() -> None:
    text = "Dr. Smith came e.g. on time. It rained! Then (he) left. 3 more came."
    spans = [text[s:e] for s, e in sentence_spans(text, 0, len(text))]
    assert spans == ["Dr. Smith came e.g. on time.", "It rained!", "Then (he) left.",
                     "3 more came."]


def test_overlap_carries_the_last_sentences_of_the_chunk_before_in_its_section() -> None:
    text = ("One alpha sentence here. Two beta sentence here. Three gamma sentence here.\n\n"
            "Four delta sentence here. Five epsilon sentence here.\n\n# Next\n\n"
            "Six zeta sentence here.\n")
    parsed = parse(text, "text/markdown")
    plain = chunk(parsed, _words, 24, merge_below=0).chunks
    one = chunk(parsed, _words, 24, merge_below=0, overlap=1).chunks
    two = chunk(parsed, _words, 24, merge_below=0, overlap=2).chunks
    assert [text[c.start:c.end] for c in plain] == [
        "One alpha sentence here. Two beta sentence here. Three gamma sentence here.",
        "Four delta sentence here. Five epsilon sentence here.", "Six zeta sentence here."]
    assert text[one[1].start:one[1].end].startswith("Three gamma sentence here.\n\nFour")
    assert text[two[1].start:two[1].end].startswith("Two beta")
    assert one[2] == plain[2] and two[2] == plain[2]  # another section: nothing carried
    tight = chunk(parsed, _words, 14, merge_below=0, overlap=2).chunks  # the bound wins
    assert all(_words([text[c.start:c.end]])[0] <= 14 for c in tight)
