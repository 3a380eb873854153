"""Turning user text into a Lucene query that matches its words and interprets nothing. Pure.

The query is a plain bag of words (an OR of terms): the text's words in order of first
occurrence, each once (case ignored), at most `MAX_CLAUSES` clauses in all, every Lucene
metacharacter escaped and the word operators (AND, OR, NOT, TO) lower-cased. Punctuation between
words is dropped (the analyser drops it too), except one of ``. , ; : ' ’`` inside a word
("don't", "3.14", "e.g"), which the analyser may keep.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise

MAX_CLAUSES = 256
"""Clauses one query may make, at most. Lucene refuses a query of more than 1,024
(TooManyClauses), and the analyser may cut a term into several tokens (each a clause), so every
term is counted at its upper bound (`clauses`), with room to spare below 1,024."""

MAX_TOKEN_CHARS = 255
"""Lucene's StandardTokenizer cuts a longer token into pieces of this size."""

_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")
_JOINERS = ".,;:'’"
# a word: word characters, joined by at most 3 single joiners ("192.168.1.1")
_TERM = re.compile(r"\w+(?:[.,;:'’]\w+){0,3}")
# characters the analyser makes one token each: CJK ideographs and hiragana
_EACH_ITS_OWN = re.compile(
    "([\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u309f\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff])"
)
_RANGES = (  # scripts the analyser keeps apart from the letters around them
    ("kana", ((0x30A0, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F))),
    ("hangul", ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7FF))),
    ("south-east asian", ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF),
                          (0x1950, 0x19DF), (0x1A20, 0x1AAF), (0xAA60, 0xAADF))),
)


def _kind(ch: str) -> str | None:
    """The character's class for token boundaries; None for a combining mark (it joins)."""
    code = ord(ch)
    for name, ranges in _RANGES:
        if any(lo <= code <= hi for lo, hi in ranges):
            return name
    category = unicodedata.category(ch)
    if category[0] == "M":
        return None
    if category[0] == "L" or category == "Nd" or ch == "_":
        return "word"
    return ch  # another number or symbol (², ½): counted as a boundary of its own


def clauses(term: str) -> int:
    """An upper bound of the tokens (clauses) the analyser may make of one term: one, plus one
    per joiner, per change of script and per `MAX_TOKEN_CHARS` characters."""
    joiners = sum(1 for ch in term if ch in _JOINERS)
    if term.isascii():  # ASCII word characters are all of one kind: no change of script
        return 1 + joiners + len(term) // MAX_TOKEN_CHARS
    kinds = [k for k in map(_kind, term) if k is not None and k not in _JOINERS]
    changes = sum(1 for a, b in pairwise(kinds) if a != b)
    return 1 + joiners + changes + len(term) // MAX_TOKEN_CHARS


def terms(text: str, max_clauses: int = MAX_CLAUSES) -> list[str]:
    """The text's words (unescaped), each once (the first spelling of a word met case-blind),
    in order of first occurrence, as many as fit in ``max_clauses`` (a word that does not fit
    is left out)."""
    seen: set[str] = set()
    found: list[str] = []
    budget = max_clauses
    for m in _TERM.finditer(_EACH_ITS_OWN.sub(r" \1 ", text)):
        term = m.group(0)
        key = term.casefold()
        if key in seen:
            continue
        cost = clauses(term)
        if cost > budget:
            continue
        seen.add(key)
        found.append(term)
        budget -= cost
        if budget == 0:
            break
    return found


def lucene_escape(text: str) -> str:
    """The Lucene query for a user's text (see the module): its `terms`, each escaped, joined
    by spaces. Returns "" when the text holds no word at all: callers skip fulltext recall
    then."""
    return " ".join(
        _SPECIAL.sub(r"\\\1", _OPERATOR.sub(lambda m: m.group(1).lower(), t)) for t in terms(text)
    )
