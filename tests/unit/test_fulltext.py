"""Unit tests of graphmem.retrieval.fulltext.lucene_escape: user text is never Lucene syntax."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from graphmem.retrieval.fulltext import lucene_escape

SPECIAL = set('+-&|!(){}[]^"~*?:\\/')
OPERATORS = re.compile(r"\b(AND|OR|NOT|TO)\b")


def unescaped_specials(query: str) -> list[int]:
    """Positions of special characters not preceded by an escaping backslash (a backslash escapes
    exactly the next character; a trailing lone backslash counts as unescaped)."""
    bad = []
    i = 0
    while i < len(query):
        ch = query[i]
        if ch == "\\":
            if i + 1 == len(query):
                bad.append(i)
            i += 2
            continue
        if ch in SPECIAL:
            bad.append(i)
        i += 1
    return bad


def test_checker_sees_unescaped_and_accepts_escaped() -> None:
    assert unescaped_specials("a+b") == [1]
    assert unescaped_specials(r"a\+b") == []
    assert unescaped_specials("a\\") == [1]
    assert unescaped_specials("a\\\\") == []
    assert unescaped_specials(r"\\+") == [2]


@pytest.mark.parametrize("ch", sorted(SPECIAL))
def test_every_special_character_is_escaped(ch: str) -> None:
    assert lucene_escape(f"a{ch}b") == f"a\\{ch}b"


def test_double_operators_are_escaped_char_by_char() -> None:
    assert lucene_escape("cats && dogs || birds") == r"cats \&\& dogs \|\| birds"


def test_typical_question() -> None:
    assert lucene_escape('What did "Caroline" say (in May)?') == (
        r"What did \"Caroline\" say \(in May\)\?"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cats AND dogs", "cats and dogs"),
        ("OR", "or"),
        ("NOT this", "not this"),
        ("from A TO B", "from A to B"),
        ("(AND)", r"\(and\)"),
        ("ANDROID ORACLE NOTE TOTAL", "ANDROID ORACLE NOTE TOTAL"),
        ("AND_X", "AND_X"),
        ("And or Not", "And or Not"),
    ],
)
def test_word_operators_are_lower_cased_only_as_words(text: str, expected: str) -> None:
    assert lucene_escape(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "?!", "*", "-- ++ //", "\n\t", "…"])
def test_text_without_word_characters_gives_empty_query(text: str) -> None:
    assert lucene_escape(text) == ""


def test_unicode_words_are_kept() -> None:
    assert lucene_escape("café über 東京") == "café über 東京"


@given(st.text())
@example("a\\")
@example("AND-OR")
@example("a&&b||!c")
def test_property_no_unescaped_special_and_no_operator(text: str) -> None:
    query = lucene_escape(text)
    assert unescaped_specials(query) == []
    assert OPERATORS.search(query) is None
    # escaping only adds backslashes: removing one before each escaped char gives the text back
    if query:
        assert re.sub(r"\\(.)", r"\1", query, flags=re.S) == OPERATORS.sub(
            lambda m: m.group(1).lower(), text
        )


@given(st.lists(st.sampled_from([*sorted(SPECIAL), "a", " ", "AND", "OR"])).map("".join))
def test_property_dense_specials(text: str) -> None:
    assert unescaped_specials(lucene_escape(text)) == []
