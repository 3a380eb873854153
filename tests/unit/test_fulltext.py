"""Unit tests of graphmem.retrieval.fulltext.lucene_escape: user text is never Lucene syntax, and a
query never has more clauses than Lucene accepts."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from graphmem.retrieval.fulltext import MAX_CLAUSES, clauses, lucene_escape, terms

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


@pytest.mark.parametrize("ch", sorted(SPECIAL - {":"}))
def test_every_special_character_between_words_separates_them(ch: str) -> None:
    assert lucene_escape(f"a{ch}b") == "a b"


def test_a_colon_inside_a_word_stays_escaped() -> None:
    assert lucene_escape("speaker:text") == r"speaker\:text"


def test_double_operators_are_dropped_as_punctuation() -> None:
    assert lucene_escape("cats && dogs || birds") == "cats dogs birds"


def test_typical_question() -> None:
    assert lucene_escape('What did "Caroline" say (in May)?') == "What did Caroline say in May"


def test_joiners_inside_words_are_kept() -> None:
    assert lucene_escape("don't stop at 3.14, e.g. 192.168.1.1 or 1,000") == (
        "don't stop at 3.14 e.g 192.168.1.1 or 1,000")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cats AND dogs", "cats and dogs"),
        ("OR", "or"),
        ("NOT this", "not this"),
        ("from A TO B", "from A to B"),
        ("(AND)", "and"),
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


def test_unicode_words_are_kept_and_ideographs_are_terms_of_their_own() -> None:
    assert lucene_escape("café über 東京") == "café über 東 京"


def test_terms_are_deduplicated_case_blind_in_order_of_first_occurrence() -> None:
    assert lucene_escape("Lisbon lisbon? moved LISBON to moved") == "Lisbon moved to"
    assert terms("東京 東京大学") == ["東", "京", "大", "学"]


def test_long_queries_are_capped_well_below_lucenes_clause_limit() -> None:
    assert MAX_CLAUSES <= 1024 // 4
    assert lucene_escape("cat " * 1000) == "cat"
    distinct = " ".join(f"w{i}" for i in range(1000))
    assert terms(distinct) == [f"w{i}" for i in range(MAX_CLAUSES)]


def test_clauses_bounds_the_tokens_a_term_may_become() -> None:
    assert clauses("cat") == 1
    assert clauses("don't") == 2  # the joiner may split it
    assert clauses("カタカナabc") == 2  # a change of script may split it
    assert clauses("x" * 600) == 3  # the tokenizer cuts tokens of 255 characters
    assert terms("ok " + "カa" * 300 + " fine") == ["ok", "fine"]  # too costly: left out


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text())
@example("192.168.1.1 don't x_1 " + "y" * 600)
def test_the_ascii_shortcut_counts_as_the_script_rule_does(text: str) -> None:
    """An ASCII term (word characters and joiners) has no change of script: the shortcut gives
    the same bound as the rule over every character's kind."""
    from itertools import pairwise

    from graphmem.retrieval.fulltext import _JOINERS, _TERM, MAX_TOKEN_CHARS, _kind

    for m in _TERM.finditer(text):
        term = m.group(0)
        kinds = [k for k in map(_kind, term) if k is not None and k not in _JOINERS]
        by_rule = (1 + sum(ch in _JOINERS for ch in term)
                   + sum(a != b for a, b in pairwise(kinds)) + len(term) // MAX_TOKEN_CHARS)
        assert clauses(term) == by_rule, term


def unescape(query: str) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", t, flags=re.S) for t in query.split(" ")] if query else []


@given(st.text())
@example("a\\")
@example("AND-OR")
@example("a&&b||!c")
@example("x " * 2000)
@example("東京" * 2000)
def test_property_escaped_capped_distinct_words_of_the_text(text: str) -> None:
    query = lucene_escape(text)
    assert unescaped_specials(query) == []
    assert OPERATORS.search(query) is None
    words = unescape(query)
    assert sum(clauses(w) for w in words) <= MAX_CLAUSES
    assert len({w.casefold() for w in words}) == len(words)
    assert all(w and re.fullmatch(r"\w+(?:[.,;:'’]\w+)*", w) for w in words)
    lowered = OPERATORS.sub(lambda m: m.group(1).lower(), text)
    assert all(w in lowered for w in words)
    assert bool(words) == bool(re.search(r"\w", text))


@given(st.lists(st.sampled_from([*sorted(SPECIAL), "a", " ", "AND", "OR"])).map("".join))
def test_property_dense_specials(text: str) -> None:
    assert unescaped_specials(lucene_escape(text)) == []


@given(st.lists(st.text(min_size=1, max_size=12), min_size=300, max_size=600).map(" ".join))
def test_property_long_texts_stay_under_the_cap(text: str) -> None:
    assert sum(clauses(w) for w in unescape(lucene_escape(text))) <= MAX_CLAUSES
