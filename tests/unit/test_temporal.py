"""Unit tests of graphmem.messages.temporal: time expressions resolved against the
message timestamp."""

from __future__ import annotations

import re
import string
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.messages import temporal
from graphmem.messages.temporal import (
    TimeExpression,
    annotate,
    event_dates,
    find_expressions,
    may_hold_time,
    query_range,
)

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # ISO week 2023-05-08..2023-05-14
SUNDAY = datetime(2023, 5, 14, 9, 30, tzinfo=UTC)
NEW_YEAR = datetime(2024, 1, 2, 10, 0, tzinfo=UTC)  # a Tuesday


def only(text: str, reference: datetime) -> TimeExpression:
    found = find_expressions(text, reference)
    assert len(found) == 1, found
    return found[0]


# (sentence, expression as written, label) against MONDAY 2023-05-08
MONDAY_CASES = [
    # days
    ("I went to a support group yesterday", "yesterday", "2023-05-07"),
    ("what a day today", "today", "2023-05-08"),
    ("Tonight we dance", "Tonight", "2023-05-08"),
    ("see you tomorrow!", "tomorrow", "2023-05-09"),
    ("it was the day before yesterday", "the day before yesterday", "2023-05-06"),
    ("the day after tomorrow", "the day after tomorrow", "2023-05-10"),
    ("Last night was amazing", "Last night", "2023-05-07"),
    ("I ran this morning", "this morning", "2023-05-08"),
    # weekdays
    ("I ran a race last Saturday", "last Saturday", "2023-05-06"),
    ("party this Saturday", "this Saturday", "2023-05-13"),
    ("party next Saturday", "next Saturday", "2023-05-20"),
    ("it started last Monday", "last Monday", "2023-05-01"),
    ("this Monday was busy", "this Monday", "2023-05-08"),
    ("Last Fri I took the kids", "Last Fri", "2023-05-05"),
    ("I joined last Tues.", "last Tues", "2023-05-02"),
    ("this past Friday", "this past Friday", "2023-05-05"),
    ("this coming Monday", "this coming Monday", "2023-05-15"),
    # N units ago / ahead
    ("3 days ago", "3 days ago", "2023-05-05"),
    ("two days ago", "two days ago", "2023-05-06"),
    ("a week ago", "a week ago", "2023-05-01..2023-05-07"),
    ("two weeks ago", "two weeks ago", "2023-04-24..2023-04-30"),
    ("a month ago", "a month ago", "2023-04"),
    ("ten years ago", "ten years ago", "2013"),
    ("two weekends ago", "two weekends ago", "2023-04-29..2023-04-30"),
    ("a few days ago", "a few days ago", "~2023-05-04..2023-05-06"),
    ("a couple of weeks ago", "a couple of weeks ago", "~2023-04-17..2023-04-30"),
    ("several years ago", "several years ago", "~2016..2020"),
    ("a few years back", "a few years back", "~2019..2021"),
    ("3 weeks from now", "3 weeks from now", "2023-05-29..2023-06-04"),
    ("two days from now", "two days from now", "2023-05-10"),
    # last/this/next week/weekend/month/year
    ("last week", "last week", "2023-05-01..2023-05-07"),
    ("this week", "this week", "2023-05-08..2023-05-14"),
    ("next week", "next week", "2023-05-15..2023-05-21"),
    ("last weekend", "last weekend", "2023-05-06..2023-05-07"),
    ("this weekend", "this weekend", "2023-05-13..2023-05-14"),
    ("next weekend", "next weekend", "2023-05-20..2023-05-21"),
    ("this past weekend", "this past weekend", "2023-05-06..2023-05-07"),
    ("last month", "last month", "2023-04"),
    ("this month", "this month", "2023-05"),
    ("camping next month", "next month", "2023-06"),
    ("a book I read last year", "last year", "2022"),
    ("this year", "this year", "2023"),
    ("next year", "next year", "2024"),
    # seasons
    ("last summer", "last summer", "2022-06..2022-08"),
    ("this summer", "this summer", "2023-06..2023-08"),
    ("last winter", "last winter", "2022-12..2023-02"),
    # months
    ("I painted in May", "in May", "2023-05"),
    ("In April we moved", "In April", "2023-04"),
    ("in June", "in June", "2022-06"),
    ("during March", "during March", "2023-03"),
    ("last May", "last May", "2022-05"),
    ("next May", "next May", "2024-05"),
    ("this June", "this June", "2023-06"),
    ("in May 2021", "in May 2021", "2021-05"),
    ("back in September, 2022", "in September, 2022", "2022-09"),
    ("May of 2020", "May of 2020", "2020-05"),
    ("what did I do in may 2023", "in may 2023", "2023-05"),
    # absolute days (read from the grammar's groups)
    ("on 8 May 2023", "8 May 2023", "2023-05-08"),
    ("May 7th", "May 7th", "2023-05-07"),
    ("on May 7, 2023.", "May 7, 2023", "2023-05-07"),
    ("on the 7th of May", "7th of May", "2023-05-07"),
    ("3 Sept. 2022", "3 Sept. 2022", "2022-09-03"),
    ("opening on June 20", "June 20", "2023-06-20"),
    ("on December 28", "December 28", "2022-12-28"),  # nearer than 2023-12-28
    ("see you 8 May.", "8 May", "2023-05-08"),
    ("it was 2023-05-07", "2023-05-07", "2023-05-07"),
    # years
    ("in 2022", "in 2022", "2022"),
    ("painting since 2016", "since 2016", "2016"),
]


@pytest.mark.parametrize(("text", "written", "label"), MONDAY_CASES)
def test_resolves_against_a_monday(text: str, written: str, label: str) -> None:
    e = only(text, MONDAY)
    assert (e.text, e.label) == (written, label)
    assert text[e.start : e.end] == written
    assert e.start == text.index(written)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("yesterday", "2023-05-13"),
        ("last week", "2023-05-01..2023-05-07"),
        ("this week", "2023-05-08..2023-05-14"),
        ("last Saturday", "2023-05-13"),
        ("this Saturday", "2023-05-13"),
        ("next Saturday", "2023-05-20"),
        ("last Sunday", "2023-05-07"),
        ("this Sunday", "2023-05-14"),
        ("this weekend", "2023-05-13..2023-05-14"),
        ("last weekend", "2023-05-06..2023-05-07"),
        ("next weekend", "2023-05-20..2023-05-21"),
        ("a week ago", "2023-05-01..2023-05-07"),
    ],
)
def test_week_edges_on_a_sunday(text: str, label: str) -> None:
    assert only(text, SUNDAY).label == label


JANUARY = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)  # a Saturday


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # a month without a year in a future-looking sentence is the coming one
        ("Plan a trip to Lisbon in March", "2026-03"),
        ("I'll be in Porto in January", "2026-01"),  # the current month is still coming
        ("We're going to Japan in October.", "2026-10"),
        ("planning to repaint the kitchen during April", "2026-04"),
        ("Can't wait for the concert in August!", "2026-08"),
        ("Remind me to renew my passport in June", "2026-06"),
        ("My sister's wedding is in March.", "2026-03"),
        ("We will fly out on December 20", "2026-12-20"),
        ("The party is on December 20", "2026-12-20"),
        ("booked the cabin for Feb 3", "2026-02-03"),
        ("I'm training for the Porto half marathon in May.", "2026-05"),
        # said of the past, or plainly: the latest one, as before
        ("I went to Lisbon in March", "2025-03"),
        ("I read a book in March", "2025-03"),
        ("I was training for the race in May", "2025-05"),
        ("It rained in March, due to the storm", "2025-03"),
        ("I flew home on December 20", "2025-12-20"),
        ("We met on January 3", "2026-01-03"),
        # a year, or last/next/this, says which one whatever the sentence
        ("I will go in March 2025", "2025-03"),
        ("we'll talk about last March", "2025-03"),
    ],
)
def test_a_month_in_a_future_looking_sentence_is_the_coming_one(text: str, label: str) -> None:
    assert only(text, JANUARY).label == label


def test_looking_ahead_is_read_per_sentence() -> None:
    text = "I was in Lisbon in March. Next time I will go in May!"
    assert [e.label for e in find_expressions(text, JANUARY)] == ["2025-03", "2026-05"]
    assert annotate("Plan a trip to Lisbon in March", JANUARY) == (
        "Plan a trip to Lisbon in March [2026-03]")


def test_leap_day_looking_ahead_takes_the_next_leap_year() -> None:
    ref = datetime(2025, 3, 2, tzinfo=UTC)
    assert [e.label for e in find_expressions("we will meet on Feb 29", ref)] == ["2028-02-29"]


def test_leap_day_without_a_year_takes_the_nearest_leap_year() -> None:
    """A day without a year is resolved against the reference, never against the day the code
    runs: 29 February exists only in leap years."""
    ref = datetime(2024, 3, 2, tzinfo=UTC)
    assert [e.label for e in find_expressions("on Feb 29 we met", ref)] == ["2024-02-29"]
    assert [e.label for e in find_expressions("on 29 February we met", ref)] == ["2024-02-29"]
    # not in the calendar: only the month is read
    assert [e.label for e in find_expressions("31 April 2023", ref)] == ["2023-04"]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("last month", "2023-12"),
        ("last December", "2023-12"),
        ("in December", "2023-12"),
        ("this December", "2024-12"),
        ("in January", "2024-01"),
        ("last January", "2023-01"),
        ("next January", "2025-01"),
        ("two months ago", "2023-11"),
        ("last year", "2023"),
        ("next year", "2025"),
        ("last week", "2023-12-25..2023-12-31"),
        ("yesterday", "2024-01-01"),
        ("last Sunday", "2023-12-31"),
        ("on December 28", "2023-12-28"),
        ("last summer", "2023-06..2023-08"),
        ("this winter", "2023-12..2024-02"),
        ("last winter", "2022-12..2023-02"),
    ],
)
def test_year_boundary(text: str, label: str) -> None:
    assert only(text, NEW_YEAR).label == label


@pytest.mark.parametrize(
    "text",
    [
        "I may go to the park",
        "May I ask you something?",
        "It was my second time there",
        "one of them was great",
        "wait a sec",
        "I'm here now, give me a second",
        "we march on",
        "an august institution",
        "the last week of May was hard",
        "the next day we left",
        "I've known these friends for 4 years",
        "I have 3 kids and 2 dogs",
        "meet at 10:30",
        "we met on 31 June",
        "once a week",
        "it took 2 hours",
        "last sat on the bench",
        "may 5 be with you",
        "we haven't talked in a few days",  # a duration, not a date
        "Rome wasn't built in a day",
    ],
)
def test_false_positives_are_not_matched(text: str) -> None:
    assert find_expressions(text, MONDAY) == []


def test_several_expressions_in_order_with_exact_spans() -> None:
    text = "Yesterday I ran; last week I swam; in May 2021 I flew."
    found = find_expressions(text, MONDAY)
    assert [(e.start, e.end, e.text) for e in found] == [
        (0, 9, "Yesterday"),
        (17, 26, "last week"),
        (35, 46, "in May 2021"),
    ]


def test_longest_overlapping_match_wins() -> None:
    assert only("the day before yesterday", MONDAY).text == "the day before yesterday"
    assert only("on 8 May 2023", MONDAY).text == "8 May 2023"  # not "May 2023"
    assert only("In May 7th was sunny", MONDAY).text == "May 7th"  # not "In May"


def test_value_and_granularity() -> None:
    day = only("yesterday", MONDAY)
    assert (day.value, day.granularity, day.approximate) == (date(2023, 5, 7), "day", False)
    week = only("last week", MONDAY)
    assert (week.value, week.granularity) == ((date(2023, 5, 1), date(2023, 5, 7)), "week")
    month = only("in May", MONDAY)
    assert (month.value, month.granularity) == ((date(2023, 5, 1), date(2023, 5, 31)), "month")
    year = only("last year", MONDAY)
    assert (year.value, year.granularity) == ((date(2022, 1, 1), date(2022, 12, 31)), "year")
    vague = only("a few days ago", MONDAY)
    assert vague.approximate and vague.value == (date(2023, 5, 4), date(2023, 5, 6))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went yesterday", "I went yesterday [2023-05-07]"),
        (
            "I went to a support group yesterday and I'm going again next week.",
            "I went to a support group yesterday [2023-05-07] and I'm going again "
            "next week [2023-05-15..2023-05-21].",
        ),
        ("Last year was rough", "Last year [2022] was rough"),
        ("In May I painted a lot", "In May [2023-05] I painted a lot"),
        ("a few days ago, sadly", "a few days ago [~2023-05-04..2023-05-06], sadly"),
        ("nothing to see", "nothing to see"),
        ("", ""),
    ],
)
def test_annotate(text: str, expected: str) -> None:
    assert annotate(text, MONDAY) == expected


def test_annotate_week_label_from_brief() -> None:
    assert annotate("last week", datetime(2023, 5, 3, tzinfo=UTC)) == (
        "last week [2023-04-24..2023-04-30]"
    )


def test_event_dates_are_sorted_and_deduplicated() -> None:
    text = "Yesterday, and the day before yesterday, and again yesterday, and last week."
    assert event_dates(text, MONDAY) == [
        (date(2023, 5, 1), date(2023, 5, 7)),
        (date(2023, 5, 6), date(2023, 5, 6)),
        (date(2023, 5, 7), date(2023, 5, 7)),
    ]
    assert event_dates("no time here", MONDAY) == []


def utc(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I do in May 2023", (utc(2023, 5, 1), utc(2023, 6, 1))),
        ("what did I do in may 2023", (utc(2023, 5, 1), utc(2023, 6, 1))),
        ("last year", (utc(2022, 1, 1), utc(2023, 1, 1))),
        ("yesterday", (utc(2023, 5, 7), utc(2023, 5, 8))),
        ("between last week and yesterday", (utc(2023, 5, 1), utc(2023, 5, 8))),
        ("from 2021 until last month", (utc(2021, 1, 1), utc(2023, 5, 1))),
        ("what is my favourite colour?", None),
        ("I may go", None),
    ],
)
def test_query_range(query: str, expected: tuple[datetime, datetime] | None) -> None:
    assert query_range(query, MONDAY) == expected


def test_reference_is_taken_in_utc() -> None:
    new_york = timezone(timedelta(hours=-5))
    late_evening = datetime(2023, 5, 8, 23, 30, tzinfo=new_york)  # 2023-05-09 04:30 UTC
    assert only("yesterday", late_evening).value == date(2023, 5, 8)
    assert query_range("today", late_evening) == (utc(2023, 5, 9), utc(2023, 5, 10))


@pytest.mark.parametrize(
    "call",
    [
        lambda ref: find_expressions("yesterday", ref),
        lambda ref: annotate("yesterday", ref),
        lambda ref: event_dates("yesterday", ref),
        lambda ref: query_range("yesterday", ref),
        lambda ref: find_expressions("no time here", ref),
    ],
)
def test_naive_reference_is_refused(call: Callable[[datetime], object]) -> None:
    naive = datetime(2023, 5, 8, 13, 56)
    with pytest.raises(ValueError, match="timezone-aware"):
        call(naive)


def test_expressions_are_frozen() -> None:
    e = only("yesterday", MONDAY)
    with pytest.raises(AttributeError):
        e.start = 3  # type: ignore[misc]


references = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31, 23, 59), timezones=st.just(UTC)
)


@given(references)
def test_yesterday_is_the_day_before(reference: datetime) -> None:
    assert only("I went there yesterday.", reference).value == reference.date() - timedelta(1)


@given(references, st.integers(min_value=1, max_value=999))
def test_n_days_ago(reference: datetime, n: int) -> None:
    assert only(f"that was {n} days ago", reference).value == reference.date() - timedelta(n)


@given(references, st.sampled_from([(1, "one"), (1, "a"), (2, "two"), (3, "three"), (10, "ten")]))
def test_n_days_ago_in_words(reference: datetime, n_word: tuple[int, str]) -> None:
    n, word = n_word
    assert only(f"{word} days ago", reference).value == reference.date() - timedelta(n)


# -- the cheap test before the rules ---------------------------------------------------------------

def test_a_letter_the_rules_match_folds_to_it() -> None:
    """Every code point that a rule's IGNORECASE matches as an ASCII letter folds to that letter
    in `may_hold_time`, so a trigger word written with it is still found."""
    letter = re.compile("[a-z]", re.IGNORECASE)
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        if letter.fullmatch(c) is None:
            continue
        wanted = [p for p in string.ascii_lowercase if re.fullmatch(p, c, re.IGNORECASE)]
        for p in wanted:
            for word in (w for w in temporal._TRIGGERS if p in w):
                assert may_hold_time(word.replace(p, c)), (hex(cp), p, word)


_PIECES = st.sampled_from([
    " ", "  ", "\n", ",", ".", "the ", "a ", "few ", "couple of ", "days ", "weeks ", "ago",
    "back", "from now", "last", "this", "next", "past", "coming", "May", "may", "MAY", "Sept",
    "sEpT", "jan", "August", "monday", "Tues", "summer", "yesterday", "toNIGHT", "İ", "ı", "ſ",
    "K", "day before", "in", "during", "since", "2023", "7th", "8", "-", "05", "x", "morning",
])


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_no_rule_matches_what_the_cheap_test_turns_away(text: str) -> None:
    if not may_hold_time(text):
        assert all(pattern.search(text) is None for pattern, _ in temporal._COMPILED), text


@given(st.text(max_size=60), references)
def test_the_cheap_test_changes_no_result(text: str, reference: datetime) -> None:
    assert temporal._find.__wrapped__(text, reference.date()) == temporal._resolved(
        text, reference.date())
