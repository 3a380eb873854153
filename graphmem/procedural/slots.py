"""Typed slots: a tool call's arguments with every value replaced by what kind of thing it is (a
user id, a reservation id, a flight number, a date, an amount, a payment method, ...), and a
request's text with the identifiers of its run masked the same way. What a run did then reads
the same whoever it served: renaming every identifier changes nothing here. Pure.

A slot is named by its argument's path (``flights[].date``); its type comes from the key's words
(``reservation_id`` -> "reservation id", ``payment_id`` -> "payment method") and, for a key that
says nothing of its value, from the value's shape (a date, a number, an email, an id)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from graphmem.procedural.models import Step

_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.IGNORECASE)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
MAX_CHOICE_CHARS = 24
"""A string value up to this long, one word (``economy``), is a choice; longer is free text."""
_BY_WORD = (
    (frozenset({"date", "dob", "birth", "birthday", "time", "when"}), "date"),
    (frozenset({"email", "mail"}), "email"),
    (frozenset({"payment", "card", "certificate", "voucher"}), "payment method"),
    (frozenset({"amount", "price", "cost", "balance", "fee", "refund"}), "amount"),
    (frozenset({"phone", "tel", "mobile"}), "phone"),
    (frozenset({"origin", "destination", "airport", "city", "address", "location"}), "place"),
    (frozenset({"name", "first", "last", "surname"}), "name"),
)
"""Key words that say what a value is, the first match wins (``payment_id`` -> payment method;
any other key ending in an id word is that thing's id: ``reservation_id`` -> "reservation id")."""
_ID_WORDS = frozenset({"id", "ids", "number", "no", "code", "key", "ref", "reference"})
IDENTIFYING = frozenset({"date", "email", "payment method", "amount", "phone", "place", "name",
                         "id", "number"})
"""Types whose values name or point at something particular (masked in text); an id type
(``user id``, ``flight number``) is identifying too."""


def words(key: str) -> list[str]:
    return [w.lower() for w in _SPLIT.split(key) if w]


def shape(value: object) -> str:
    """The type of a value whose key says nothing of it."""
    if isinstance(value, bool):
        return "yes/no"
    if isinstance(value, (int, float)):
        return "number"
    text = str(value).strip()
    if _DATE.match(text):
        return "date"
    if _EMAIL.match(text):
        return "email"
    if _NUMBER.match(text):
        return "number"
    if len(text) > MAX_CHOICE_CHARS or " " in text:
        return "text"
    if any(c.isdigit() for c in text):
        return "id"
    return "choice"


def slot_type(key: str, value: object) -> str:
    """What an argument's value is: by its key's words first (`_BY_WORD`; a key ending in an id
    word: ``user_id`` -> "user id", ``flight_number`` -> "flight number"), else by the value's
    shape (`shape`) when that is a date, an email or free text, else the key's words (``cabin``:
    a choice among a few values, named by its key)."""
    if isinstance(value, bool):
        return "yes/no"
    ws = words(key)
    for hints, kind in _BY_WORD:
        if hints & set(ws) and (kind == "payment method" or not _ID_WORDS & set(ws)):
            return kind
    if ws and ws[-1] in _ID_WORDS:
        last = "number" if ws[-1] in ("number", "no") else "id"
        return " ".join([*ws[:-1], last]) if len(ws) > 1 else last
    found = shape(value)
    return found if found in ("date", "email", "text") or not ws else " ".join(ws)


def identifying(kind: str) -> bool:
    """Whether a slot type's values point at something particular (masked in text)."""
    return kind in IDENTIFYING or kind.endswith((" id", " number"))


def flatten(value: object, path: str = "") -> list[tuple[str, object]]:
    """Leaf values with their paths: ``{"flights": [{"date": d}]}`` -> ``[("flights[].date",
    d)]``; a list's items share one path."""
    if isinstance(value, dict):
        out: list[tuple[str, object]] = []
        for k in sorted(value):
            out += flatten(value[k], f"{path}.{k}" if path else str(k))
        return out
    if isinstance(value, list):
        return [pair for item in value for pair in flatten(item, f"{path}[]")]
    return [] if value is None else [(path, value)]


def _leaf_key(path: str) -> str:
    return path.rsplit(".", 1)[-1].removesuffix("[]")


def slots(arguments: str | None) -> dict[str, str]:
    """A call's arguments (JSON) as slots: path -> type, sorted by path; {} when they are no
    JSON object."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return dict(sorted({p: slot_type(_leaf_key(p), v) for p, v in flatten(value)}.items()))


MIN_VALUE_CHARS = 3
"""Shorter values are not masked in text (``1``, ``no``): too many false matches."""


def values(arguments: str | None) -> dict[str, str]:
    """A call's identifying values (lower-cased, `MIN_VALUE_CHARS` or more) with their slot
    types: what two calls can share (the same reservation id), never kept themselves."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    found: dict[str, str] = {}
    for path, leaf in flatten(value):
        kind = slot_type(_leaf_key(path), leaf)
        text = str(leaf).strip().lower()
        if len(text) >= MIN_VALUE_CHARS and (identifying(kind) or shape(leaf) in ("id", "date")):
            found.setdefault(text, kind)
    return found


def identifiers(steps: Sequence[Step]) -> dict[str, str]:
    """The values a run's tool calls passed and its tool results returned (JSON), each with its
    slot type: what masking hides in the run's text. Only identifying values (`identifying`
    types, or shaped as an id, a date, an email) of `MIN_VALUE_CHARS` or more: free text, choices
    (``economy``) and yes/no are no identifiers. A value seen under several keys takes the type
    of the first key that says what it is (``reservation_id`` over a list of ``reservations``)."""
    found: dict[str, str] = {}
    for s in steps:
        raw = s.arguments if s.kind == "tool_call" else s.text if s.kind == "tool_result" else None
        if not raw:
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        for path, leaf in flatten(value):
            kind = slot_type(_leaf_key(path), leaf)
            if not identifying(kind) and shape(leaf) not in ("id", "date", "email"):
                continue
            text = str(leaf).strip().lower()
            if len(text) < MIN_VALUE_CHARS:
                continue
            if text not in found or (identifying(kind) and not identifying(found[text])):
                found[text] = kind  # a key that says what it is wins over a generic one
    return found


_TOKEN = re.compile(
    r"\b\d{1,2}(:\d{2})?\s?(am|pm)\b"                # a time of day
    r"|\$\s?\d[\d,]*(\.\d+)?"                     # an amount
    r"|\b\d{4}-\d{2}-\d{2}\b"                     # an ISO date
    r"|[\w.+-]+@[\w-]+\.[\w.]+"                   # an email
    r"|\b[A-Za-z]*\d[\w]*\b"                      # anything with a digit: ids, numbers
    r"|\b[A-Za-z]+_[A-Za-z0-9_]+\b"               # snake_case: ids
    r"|\b[A-Z]{3}\b")                             # a three-letter code
_MONTH_DAY = re.compile(
    r"\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(tember)?|"
    r"oct(ober)?|nov(ember)?|dec(ember)?)\.?\s+\d{1,2}(st|nd|rd|th)?\b"
    r"|\b\d{1,2}(st|nd|rd|th)?\s+(of\s+)?(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|"
    r"july?|aug(ust)?|sep(tember)?|oct(ober)?|nov(ember)?|dec(ember)?)\b", re.IGNORECASE)


_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b(?!')")
_SENTENCE_START = re.compile(r"(^|[.!?:;\n\"(\[]|\s-)\s*$")


def _names(text: str) -> str:
    """Capitalised words inside a sentence (not its first word) as ``<name>``: the people,
    places and companies a request names ("I am Mia", "from Houston to Denver")."""
    def one(m: re.Match[str]) -> str:
        return m.group(0) if _SENTENCE_START.search(text[: m.start()]) else "<name>"

    return _CAPITALISED.sub(one, text)


def _token_type(token: str) -> str:
    if token[-2:].lower() in ("am", "pm") and token[0].isdigit():
        return "time"
    if token.startswith("$"):
        return "amount"
    if "@" in token:
        return "email"
    if _DATE.match(token):
        return "date"
    if _NUMBER.match(token.replace(",", "")):
        return "number"
    return "id" if any(c.isdigit() for c in token) or "_" in token else "code"


def mask(text: str, known: dict[str, str] | None = None) -> str:
    """``text`` with the run's identifiers (`identifiers`, longest first, whole words, any case),
    every identifier-shaped token (amounts, dates, emails, anything with a digit, snake_case
    ids, three-letter codes) and every capitalised word inside a sentence (a name) replaced by
    ``<type>``: "cancel HAT041 for Mia" -> "cancel <flight number> for <name>"."""
    out = _MONTH_DAY.sub("<date>", text)
    for value in sorted(known or {}, key=lambda v: (-len(v), v)):
        pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)
        out = pattern.sub(f"<{(known or {})[value]}>", out)
    return _names(_TOKEN.sub(lambda m: f"<{_token_type(m.group(0))}>", out))
