"""Time expressions in chat text, resolved against the timestamp of the message that holds them.

A message sent 2023-05-08 saying "I went to a support group yesterday" is about 2023-05-07: the
*event* time is not the time it was *said*. A small regex grammar finds the expressions (exact and
predictable) and resolves each to an inclusive range of days with a granularity, without a
date-parsing library: absolute dates ("8 May 2023", "May 7th") are read from the grammar's own
groups, so a date without a year never depends on the day the code runs.

Conventions (days are calendar days in UTC; a reference must be timezone-aware):

* Weeks are ISO weeks, Monday..Sunday; a weekend is the Saturday..Sunday of its week.
* "last <weekday>" is the most recent such day strictly before the reference day, "this <weekday>"
  the one in the reference week, "next <weekday>" the one in the following week, "this past" /
  "this coming <weekday>" the nearest one strictly before / after the reference day.
* "N days ago" is one day; "N weeks/weekends/months/years ago" is the whole unit containing the
  shifted day ("two weeks ago" = the ISO week of reference - 14 days), so "last week" is "a week
  ago"; "N <units> back" is "ago", "N <units> from now" goes forward. "in N <units>" is not
  read: in chat it is mostly a duration ("haven't talked in a few days", "built in a day").
* Vague counts give ranges flagged ``approximate``: "a couple of" = 2..3, "a few" = 2..4,
  "several" = 3..7 ("a few days ago" on 2023-05-08 is 2023-05-04..2023-05-06).
* "in/during May" is the May of the reference year unless that is after the reference month, then
  the previous year's (memory is mostly about the past); "last May" is the most recent May strictly
  before the reference month, "next May" the first one strictly after it, "this May" the one of the
  reference year. A day without a year ("May 7th", "8 May") takes the year nearest the reference.
* In a future-looking sentence (one with "will", "'ll", "going to", "plan", "want to", "hope to",
  "looking forward", "can't wait", "upcoming", "booked", "let's", "I'm flying"...: `_FUTURE`; or
  "is in May", "is on May 7") "in/during May" and a day without a year are the coming ones: "Plan
  a trip to Lisbon in March" said on 2026-01-10 is 2026-03, and said in March 2026 still 2026-03.
* Seasons are northern, three months each (winter = Dec..Feb): "last summer" is the latest one
  over before the reference month, "next summer" the first starting after the reference day,
  "this summer" the one containing the reference day, else the one starting in its year.
* "tonight", "this morning/afternoon/evening" are today; "last night" is yesterday.
* "May", "March", "August" and month/weekday abbreviations count only when capitalised, unless a
  year follows ("may 2023"). "the last/next ..." (the last week of May, the next week) is skipped.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Literal, NamedTuple

Granularity = Literal["day", "week", "month", "year"]
DateRange = tuple[date, date]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTH_ABBR = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
               "sept": 9, "oct": 10, "nov": 11, "dec": 12}
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
                 "fri": 4, "sat": 5, "sun": 6}
_NEED_CAPITAL = {"may", "march", "august"} | set(_MONTH_ABBR) | set(_WEEKDAY_ABBR)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "fifteen": 15, "twenty": 20, "thirty": 30}
_VAGUE = {"couple": (2, 3), "few": (2, 4), "several": (3, 7)}
_UNIT_GRANULARITY: dict[str, Granularity] = {
    "day": "day", "weekend": "day", "week": "week", "month": "month", "year": "year"}
_DAY_WORDS = {"day before yesterday": -2, "yesterday": -1, "last night": -1, "today": 0,
              "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
              "tomorrow": 1, "day after tomorrow": 2}
_REL = {"last": -1, "this past": -1, "this": 0, "next": 1, "this coming": 1}
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # northern, by month


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation of words, longest first, spaces matching any whitespace."""
    ordered = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


_MON = rf"(?P<mon>{_alternation([*_MONTHS, *_MONTH_ABBR])})"
_WD = rf"(?P<wd>{_alternation([*_WEEKDAYS, *_WEEKDAY_ABBR])})"
_NUM = rf"(?P<n>\d{{1,3}}|(?:a\s+)?couple\s+of|a\s+few|few|several|{_alternation(_NUMBERS)})"
_UNIT = r"(?P<unit>day|weekend|week|month|year)s?"
_YEAR = r"(?P<year>(?:19|20)\d\d)\b(?![-/:.]\d)"
_REL_WORD = r"(?P<rel>this\s+past|this\s+coming|last|this|next)"
_NOT_THE = r"(?<!\bthe\s)"


@dataclass(frozen=True)
class TimeExpression:
    """A time expression: its span in the text and the inclusive days it resolves to."""

    start: int
    end: int
    text: str
    first_day: date
    last_day: date
    granularity: Granularity
    approximate: bool = False

    @property
    def value(self) -> date | DateRange:
        """One day, or the inclusive range ``(first_day, last_day)``."""
        a, b = self.first_day, self.last_day
        return a if a == b else (a, b)

    @property
    def label(self) -> str:
        """How annotate() renders it: 2023-05-07, 2023-05, 2022, ranges as a..b, '~' if vague."""
        a, b = self.first_day, self.last_day
        if self.granularity == "year":
            ends = (str(a.year), str(b.year))
        elif self.granularity == "month":
            ends = (f"{a:%Y-%m}", f"{b:%Y-%m}")
        else:
            ends = (a.isoformat(), b.isoformat())
        text = ends[0] if ends[0] == ends[1] else f"{ends[0]}..{ends[1]}"
        return f"~{text}" if self.approximate else text


class _Hit(NamedTuple):
    first: date
    last: date
    granularity: Granularity
    approximate: bool = False


# -- calendar arithmetic ---------------------------------------------------------------------------

def _month_range(year: int, month: int) -> DateRange:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _period(ref: date, unit: str, offset: int) -> DateRange:
    """The day/week/weekend/month/year ``offset`` units away from the one containing ``ref``."""
    if unit == "day":
        day = ref + timedelta(days=offset)
        return day, day
    if unit in ("week", "weekend"):
        monday = ref - timedelta(days=ref.weekday()) + timedelta(weeks=offset)
        return monday + timedelta(days=5 if unit == "weekend" else 0), monday + timedelta(days=6)
    if unit == "month":
        index = ref.year * 12 + ref.month - 1 + offset
        return _month_range(index // 12, index % 12 + 1)
    return date(ref.year + offset, 1, 1), date(ref.year + offset, 12, 31)


def _shifted(ref: date, unit: str, low: int, high: int, approximate: bool) -> _Hit:
    """The hull of the units ``low``..``high`` away (negative: in the past)."""
    a, b = _period(ref, unit, min(low, high)), _period(ref, unit, max(low, high))
    return _Hit(a[0], b[1], _UNIT_GRANULARITY[unit], approximate)


def _nearest_year(ref: date, month: int, day: int) -> date | None:
    """The (month, day) nearest to ``ref``, looking one year back and forward; ties go back."""
    candidates = []
    for year in (ref.year - 1, ref.year, ref.year + 1):
        try:
            candidates.append(date(year, month, day))
        except ValueError:
            continue
    return min(candidates, key=lambda d: (abs(d - ref), d > ref), default=None)


def _next_on_or_after(ref: date, month: int, day: int) -> date | None:
    """The first (month, day) on or after ``ref`` (within four years: 29 February)."""
    for year in range(ref.year, ref.year + 5):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= ref:
            return candidate
    return None


def _word_ok(word: str) -> bool:
    """Ambiguous words ("may", "march", "sat") count only when capitalised."""
    return word.lower() not in _NEED_CAPITAL or word[:1].isupper()


def _norm(words: str) -> str:
    return " ".join(words.lower().split())


def _month_number(word: str) -> int:
    key = word.lower()
    return _MONTHS.get(key) or _MONTH_ABBR[key]


def _count(words: str) -> tuple[int, int, bool]:
    """(low, high, approximate) of a count: '3', 'three', 'a', 'a few', 'a couple of'."""
    key = _norm(words)
    if key.isdigit():
        return int(key), int(key), False
    for vague, (low, high) in _VAGUE.items():
        if vague in key:
            return low, high, True
    return _NUMBERS[key], _NUMBERS[key], False


# -- grammar rules: each resolves one regex match against the reference day, or rejects it ---------

def _day_word(m: re.Match[str], ref: date) -> _Hit:
    key = _norm(m.group(0)).removeprefix("the ")
    return _Hit(*_period(ref, "day", _DAY_WORDS[key]), "day")


def _relative_unit(m: re.Match[str], ref: date) -> _Hit:
    offset = _REL[_norm(m["rel"])]
    return _shifted(ref, m["unit"].lower(), offset, offset, False)


def _units_away(m: re.Match[str], ref: date) -> _Hit:
    low, high, approximate = _count(m["n"])
    phrase = m.group(0).lower()
    sign = 1 if phrase.endswith("now") else -1
    return _shifted(ref, m["unit"].lower(), sign * low, sign * high, approximate)


def _relative_weekday(m: re.Match[str], ref: date) -> _Hit | None:
    if not _word_ok(m["wd"]):
        return None
    key = m["wd"].lower()
    wd, rel = _WEEKDAYS.get(key, _WEEKDAY_ABBR.get(key, 0)), _norm(m["rel"])
    if rel in ("last", "this past"):
        day = ref - timedelta(days=(ref.weekday() - wd - 1) % 7 + 1)
    elif rel == "this coming":
        day = ref + timedelta(days=(wd - ref.weekday() - 1) % 7 + 1)
    else:
        day = _period(ref, "week", _REL[rel])[0] + timedelta(days=wd)
    return _Hit(day, day, "day")


def _relative_season(m: re.Match[str], ref: date) -> _Hit:
    start, rel = _SEASONS[m["season"].lower()], _REL[_norm(m["rel"])]
    seasons = [_shifted(date(y, start, 1), "month", 0, 2, False) for y in range(ref.year - 2,
                                                                            ref.year + 2)]
    if rel < 0:  # the last one over before the reference month
        return [s for s in seasons if s.last < ref.replace(day=1)][-1]
    if rel > 0:  # the first one starting after the reference day
        return next(s for s in seasons if s.first > ref)
    current = [s for s in seasons if s.first <= ref <= s.last]  # else the one starting this year
    return current[0] if current else next(s for s in seasons if s.first.year == ref.year)


# Words that make a sentence look ahead: a month or day without a year in it is the coming one.
_FUTURE = re.compile(
    r"\b(?:will|shall|gonna|going\s+to|plan|plans|planning|want\s+to|wanna|hope\s+to|"
    r"hoping\s+to|like\s+to|love\s+to|intend|intends|aim\s+to|looking\s+forward|can['’]?t\s+wait|"
    r"cannot\s+wait|upcoming|coming\s+up|booked|scheduled|due(?!\s+to)|let['’]?s|remind|"
    r"reminder|soon|thinking\s+(?:of|about))\b|['’]ll\b|"
    r"(?:\bam|['’]m|\bare|['’]re|\bis)\s+(?!\w+ing\s+back)\w+ing\b",  # "I'm flying to Rome in May"
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;\n]")
_IS_BEFORE = re.compile(r"\b(?:is|are)\s+(?:on\s+)?$", re.IGNORECASE)  # "the wedding is in March"


def _future_looking(m: re.Match[str]) -> bool:
    """Does the sentence holding the match look ahead (`_FUTURE`, or "is in May")?"""
    text = m.string
    if _IS_BEFORE.search(text, max(0, m.start() - 12), m.start()):
        return True
    start = max((e.end() for e in _SENTENCE_END.finditer(text, 0, m.start())), default=0)
    stop = _SENTENCE_END.search(text, m.end())
    return _FUTURE.search(text, start, stop.start() if stop else len(text)) is not None


def _relative_month(m: re.Match[str], ref: date) -> _Hit | None:
    if not _word_ok(m["mon"]):
        return None
    month, rel = _month_number(m["mon"]), m["rel"].lower()
    if rel == "last":
        year = ref.year if month < ref.month else ref.year - 1
    elif rel == "next":
        year = ref.year if month > ref.month else ref.year + 1
    elif rel == "this":
        year = ref.year
    elif _future_looking(m):  # in, during: the coming one
        year = ref.year if month >= ref.month else ref.year + 1
    else:  # in, during: the latest one
        year = ref.year if month <= ref.month else ref.year - 1
    return _Hit(*_month_range(year, month), "month")


def _month_year(m: re.Match[str], ref: date) -> _Hit:
    return _Hit(*_month_range(int(m["year"]), _month_number(m["mon"])), "month")


def _day_month(m: re.Match[str], ref: date) -> _Hit | None:
    if not (m["year"] or _word_ok(m["mon"])):
        return None
    month, number = _month_number(m["mon"]), int(m["day"])
    if m["year"]:
        try:
            day: date | None = date(int(m["year"]), month, number)
        except ValueError:  # not in the calendar: "31 April 2023"
            return None
    elif _future_looking(m):
        day = _next_on_or_after(ref, month, number)
    else:
        day = _nearest_year(ref, month, number)
    return None if day is None else _Hit(day, day, "day")


def _iso_date(m: re.Match[str], ref: date) -> _Hit | None:
    try:
        day = date.fromisoformat(m.group(0))
    except ValueError:
        return None
    return _Hit(day, day, "day")


def _year(m: re.Match[str], ref: date) -> _Hit:
    return _Hit(*_period(date(int(m["year"]), 1, 1), "year", 0), "year")


_Rule = Callable[[re.Match[str], date], _Hit | None]
_DAY_NUM = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_RULES: list[tuple[str, _Rule]] = [
    (rf"\b(?:(?:the\s+)?day\s+(?:before\s+yesterday|after\s+tomorrow)|"
     rf"{_alternation(_DAY_WORDS)})\b", _day_word),
    (rf"{_NOT_THE}\b{_REL_WORD}\s+(?P<unit>week|weekend|month|year)\b(?!\s+of\b)", _relative_unit),
    (rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|back|from\s+now)\b", _units_away),
    (rf"{_NOT_THE}\b{_REL_WORD}\s+{_WD}\b", _relative_weekday),
    (rf"{_NOT_THE}\b{_REL_WORD}\s+(?P<season>{_alternation(_SEASONS)})\b", _relative_season),
    (rf"\b(?P<rel>last|this|next|in|during)\s+{_MON}\b(?![ \t]*,?[ \t]*\d)", _relative_month),
    (rf"\b(?:(?:in|during)\s+)?{_MON}\.?,?\s+(?:of\s+)?{_YEAR}", _month_year),
    (rf"\b{_DAY_NUM}\s+(?:of\s+)?{_MON}\b(?:\.?,?\s+{_YEAR})?", _day_month),
    (rf"\b{_MON}\.?\s+{_DAY_NUM}\b(?![:.]\d)(?:,?\s+{_YEAR})?", _day_month),
    (r"\b(?:19|20)\d\d-\d\d-\d\d\b", _iso_date),
    (rf"\b(?:in|during|since|from|until|by)\s+{_YEAR}", _year),
]
_COMPILED = [(re.compile(pattern, re.IGNORECASE), rule) for pattern, rule in _RULES]


# -- public API ------------------------------------------------------------------------------------

def _reference_day(reference: datetime) -> date:
    if reference.tzinfo is None or reference.utcoffset() is None:
        raise ValueError("reference datetime must be timezone-aware (graphmem keeps time explicit)")
    return reference.astimezone(UTC).date()


def find_expressions(text: str, reference: datetime) -> list[TimeExpression]:
    """The time expressions of ``text`` in order, resolved against ``reference`` (tz-aware).

    Where matches overlap the longest wins ("the day before yesterday" over "yesterday").
    """
    return list(_find(text, _reference_day(reference)))


# Every rule's match holds a digit or one of these words (case-insensitively): its day word,
# relative word (this, last, next), "ago" / "back" / "from now", or month name.
_TRIGGERS = tuple(sorted({"yesterday", "tomorrow", "today", "tonight", "last", "this", "next",
                          "ago", "back", "now", *_MONTHS, *_MONTH_ABBR}))
_DIGIT = re.compile(r"\d")
# what the rules' IGNORECASE matches as "i" but casefold() keeps apart (checked over all of
# Unicode by the tests)
_FOLD_I = str.maketrans({"\u0130": "i", "\u0131": "i"})


def may_hold_time(text: str) -> bool:
    """False only when no rule can match ``text``: no digit and no trigger word in it. A cheap
    test (a few microseconds against about a hundred for the rules), and most chat messages
    fail it."""
    if _DIGIT.search(text) is not None:
        return True
    folded = text.translate(_FOLD_I).casefold()
    return any(word in folded for word in _TRIGGERS)


@lru_cache(maxsize=65536)
def _find(text: str, ref: date) -> tuple[TimeExpression, ...]:
    """Cached: the same messages are rendered again and again in search contexts."""
    return _resolved(text, ref) if may_hold_time(text) else ()


def _resolved(text: str, ref: date) -> tuple[TimeExpression, ...]:
    """Every rule over ``text``; where matches overlap the longest wins."""
    found: list[TimeExpression] = []
    for pattern, rule in _COMPILED:
        for m in pattern.finditer(text):
            try:
                hit = rule(m, ref)
            except (ValueError, OverflowError):  # out of the calendar: "in 999 years" in 9999
                continue
            if hit is not None:
                found.append(TimeExpression(m.start(), m.end(), m.group(0), hit.first, hit.last,
                                            hit.granularity, hit.approximate))
    chosen: list[TimeExpression] = []
    for e in sorted(found, key=lambda e: (e.start - e.end, e.start)):
        if all(e.end <= c.start or e.start >= c.end for c in chosen):
            chosen.append(e)
    return tuple(sorted(chosen, key=lambda e: e.start))


def annotate(text: str, reference: datetime) -> str:
    """``text`` with each expression followed by its resolution: "yesterday [2023-05-07]"."""
    parts, pos = [], 0
    for e in find_expressions(text, reference):
        parts += [text[pos:e.end], f" [{e.label}]"]
        pos = e.end
    return "".join([*parts, text[pos:]])


def event_dates(text: str, reference: datetime) -> list[DateRange]:
    """The distinct inclusive day ranges the text refers to, sorted: event dates of a message."""
    return sorted({(e.first_day, e.last_day) for e in find_expressions(text, reference)})


def query_range(query: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The UTC half-open range [start, end) hulling the query's time expressions, or None."""
    found = find_expressions(query, now)
    if not found:
        return None
    first = min(e.first_day for e in found)
    last = max(e.last_day for e in found)
    return datetime.combine(first, time(), UTC), datetime.combine(last + timedelta(1), time(), UTC)
