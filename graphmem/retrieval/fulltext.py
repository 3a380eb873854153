"""Turning user text into a Lucene query that matches its words and interprets nothing. Pure."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")


def lucene_escape(text: str) -> str:
    """Escape every Lucene metacharacter and neutralise the word operators (AND, OR, NOT, TO) by
    lower-casing them, so the query is a plain bag of words (OR of terms). Returns "" when the text
    holds no word at all: callers skip fulltext recall then."""
    if not re.search(r"\w", text):
        return ""
    lowered = _OPERATOR.sub(lambda m: m.group(1).lower(), text)
    return _SPECIAL.sub(r"\\\1", lowered)
