"""Unit tests of graphmem.retrieval.context: token estimate and the rendered context string."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.retrieval.context import estimate_tokens, prompt_safe, render, render_facts


@dataclass(frozen=True)
class Msg:
    speaker: str
    text: str
    timestamp: datetime
    session_id: str


def at(day: int, hour: int, minute: int) -> datetime:
    return datetime(2023, 5, day, hour, minute, 42, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("hello", 1),
        ("Hello, world!", 4),
        ("it's 3.5 km", 7),  # it ' s 3 . 5 km
        ("naïve café", 2),
        ("...", 3),
    ],
)
def test_estimate_tokens_counts_words_and_punctuation(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
       | st.text(alphabet=string.printable + "\x1c\x1d\x1e\x1f\x85\xa0·é_", max_size=200))
def test_estimate_tokens_is_the_regex_count(text: str) -> None:
    """The ASCII lines counted without the regex give the regex's count, for any text."""
    assert estimate_tokens(text) == len(re.findall(r"\w+|[^\w\s]", text))


def test_render_one_block() -> None:
    block = [
        Msg("Caroline", "I went to the LGBTQ support group.", at(8, 13, 56), "s1"),
        Msg("Melanie", "That's great!", at(8, 13, 57), "s1"),
    ]
    assert render([block]) == (
        "## session s1 · 2023-05-08 13:56 UTC\n"
        "[2023-05-08 13:56] Caroline: I went to the LGBTQ support group.\n"
        "[2023-05-08 13:57] Melanie: That's great!"
    )


def test_render_one_paragraph_per_cluster_with_its_own_header() -> None:
    blocks = [
        [Msg("A", "first", at(1, 9, 0), "s1")],
        [Msg("B", "second", at(20, 18, 5), "s2"), Msg("A", "third", at(20, 18, 6), "s2")],
    ]
    paragraphs = render(blocks).split("\n\n")
    assert len(paragraphs) == 2
    assert paragraphs[0].splitlines() == [
        "## session s1 · 2023-05-01 09:00 UTC",
        "[2023-05-01 09:00] A: first",
    ]
    assert paragraphs[1].splitlines() == [
        "## session s2 · 2023-05-20 18:05 UTC",
        "[2023-05-20 18:05] B: second",
        "[2023-05-20 18:06] A: third",
    ]


def test_render_header_uses_first_message_of_the_block() -> None:
    block = [Msg("A", "x", at(2, 23, 59), "s9"), Msg("A", "y", at(3, 0, 1), "s9")]
    assert render([block]).splitlines()[0] == "## session s9 · 2023-05-02 23:59 UTC"


def test_render_skips_empty_blocks_and_empty_input() -> None:
    assert render([]) == ""
    assert render([[], []]) == ""
    only = [Msg("A", "x", at(1, 0, 0), "s")]
    assert render([[], only, []]) == render([only])


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@dataclass(frozen=True)
class FactRow:
    subject: str
    type: str
    content: str
    valid_from: datetime
    valid_to: datetime | None = None


def test_prompt_safe_removes_nul_controls_and_bidi_keeps_lines_and_tabs() -> None:
    assert prompt_safe("a\x00b\x07c\x1bd\x7fe\x85f\x9fg") == "abcdefg"
    assert prompt_safe(f"pay {BIDI}now") == "pay now"
    assert prompt_safe("one\r\ntwo\rthree\nfour\tfive") == "one\ntwo\nthree\nfour\tfive"
    assert prompt_safe("café 東京 \u200d\U0001f600") == "café 東京 \u200d\U0001f600"  # ZWJ stays


def test_render_and_render_facts_are_prompt_safe_and_the_source_is_untouched() -> None:
    text = "evil\x00 \u202egnp.exe\u202c ok\r\nnext"
    m = Msg("Mal\u2066lory", text, at(8, 13, 56), "s\x851")
    assert render([[m]], normalise_time=False) == (
        "## session s1 · 2023-05-08 13:56 UTC\n"
        "[2023-05-08 13:56] Mallory: evil gnp.exe ok\nnext")
    assert m.text == text
    fact = FactRow("Mal\u202elory", "city\x00", "Lis\u200fbon\x1b[31m", at(1, 0, 0))
    assert render_facts([fact]) == (
        "## facts\n- Mallory · city: Lisbon[31m (valid from 2023-05-01)")


@given(st.text())
def test_property_prompt_safe_leaves_no_control_but_newline_and_tab(text: str) -> None:
    safe = prompt_safe(text)
    assert not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c in BIDI
                   for c in safe)
    assert prompt_safe(safe) == safe
