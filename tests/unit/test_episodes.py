"""Unit tests of graphmem.formation.episodes: the extractive narrator, occurred_at from the time
expressions of the messages, episode ids and drafts. Pure: no database, no model."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.formation.episodes import (
    TITLE_WORDS,
    ExtractiveNarrator,
    _central_sentence,
    annotated_lines,
    draft,
    episode_id,
    keyphrase_title,
    keyphrases,
    occurred,
)
from graphmem.formation.observer import Turn
from graphmem.formation.run import _compared

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
R = 1 / math.sqrt(2)

SHORT = "Yes, exactly that one."
LONG_SENTENCE = ("We hiked the whole ridge trail from the north parking lot to the old fire "
                 "lookout tower and back!")


def turn(i: int, text: str, vector: tuple[float, ...] = (), speaker: str | None = None,
         at: datetime | None = None) -> Turn:
    return Turn(f"m{i}", speaker or ("alice" if i % 2 == 0 else "bob"), text,
                at or MONDAY + timedelta(seconds=30 * i), vector)


# --- ExtractiveNarrator -------------------------------------------------------------------------

def central_episode() -> list[Turn]:
    """The short turn 0 points exactly at the mean of all four vectors; of the substantial turns
    (>= 8 words) turn 3 is the most central."""
    return [
        turn(0, SHORT, (R, R, 0.0)),
        turn(1, "I think the weather up there will be too cold in the morning.", (1.0, 0.0, 0.0)),
        turn(2, "My sister wants to bring her dog along with us this time.", (0.0, 1.0, 0.0)),
        turn(3, f"Sure. {LONG_SENTENCE} Great fun.", (0.8, 0.6, 0.0)),
    ]


def test_fallback_title_is_the_longest_sentence_of_the_most_central_substantial_turn() -> None:
    title = _central_sentence(central_episode())
    words = LONG_SENTENCE.split()
    assert len(words) > TITLE_WORDS == 12
    assert title == " ".join(words[:12]) + "..."


def test_fallback_short_turns_count_when_no_turn_is_substantial() -> None:
    episode = [turn(0, "Where to?", (1.0, 0.0)), turn(1, "The lake, I guess.", (R, R)),
               turn(2, "Fine.", (0.0, 1.0))]
    assert _central_sentence(episode) == "The lake, I guess."


@pytest.mark.parametrize(("words", "suffix"), [(11, ""), (12, ""), (13, "...")])
def test_fallback_title_has_at_most_twelve_words(words: int, suffix: str) -> None:
    text = " ".join(f"w{k}" for k in range(words))
    title = _central_sentence([turn(0, text, (1.0, 0.0))])
    assert title == " ".join(f"w{k}" for k in range(min(words, 12))) + suffix


def test_without_vectors_the_fallback_title_comes_from_the_first_turn() -> None:
    episode = [Turn(t.id, t.speaker, t.text, t.timestamp) for t in central_episode()]
    assert _central_sentence(episode) == SHORT


def test_an_episode_naming_nothing_keeps_its_central_sentence_as_title() -> None:
    episode = [turn(0, "Yes, exactly that one."), turn(1, "Wow, so good!")]
    assert ExtractiveNarrator().narrate(episode)[0] == "Yes, exactly that one."


LISBON = [
    turn(0, "We finally moved to Lisbon last month! The flat is in Príncipe Real.", speaker="ana"),
    turn(1, "Congrats! How's the flat? I called you on Sunday.", speaker="tom"),
    turn(2, "The flat is tiny but the view over Príncipe Real is lovely.", speaker="ana"),
]
RUNNING = [
    turn(3, "Still training for the Porto half marathon? How's the knee?", speaker="tom"),
    turn(4, "The knee is better, the physio gave me exercises. Lisbon has great hills.",
         speaker="ana"),
]


def test_the_title_says_what_the_episode_is_about() -> None:
    """Keyphrases against the session's other episodes, as the messages write them; never a
    verb ("moved", "called") nor a speaker; what the other episodes share ranks lower."""
    assert keyphrases(LISBON, [RUNNING]) == ["flat", "Príncipe Real", "view"]  # not Lisbon
    assert keyphrases(LISBON) == ["flat", "Príncipe Real", "Lisbon"]
    assert keyphrase_title(LISBON, [RUNNING]) == "Flat, Príncipe Real and view"
    assert keyphrases(RUNNING, [LISBON]) == ["knee", "Porto", "marathon"]
    title, _ = ExtractiveNarrator().narrate(RUNNING, [LISBON])
    assert title == "Knee, Porto and marathon"
    assert keyphrase_title([turn(0, "Hello!"), turn(1, "Hi.")]) == ""


def test_a_phrase_inside_a_chosen_one_is_left_out() -> None:
    episode = [turn(0, "The support group met. The support group was kind."),
               turn(1, "Which group? The support group at the library?")]
    assert keyphrases(episode) == ["support group", "library", "group"][:2]


def test_narrative_has_one_line_per_turn_with_resolved_dates() -> None:
    episode = [turn(0, "I went to a support group yesterday.", (1.0, 0.0)),
               turn(1, "How was it? Was it like the one last Friday?", (0.0, 1.0)),
               turn(2, "Better than that.", (R, R))]
    _, narrative = ExtractiveNarrator().narrate(episode)
    assert narrative.splitlines() == [
        "alice: I went to a support group yesterday [2023-05-07].",
        "bob: How was it? Was it like the one last Friday [2023-05-05]?",
        "alice: Better than that.",
    ]
    assert annotated_lines(episode) == narrative.splitlines()


def test_extractive_narrator_name() -> None:
    assert ExtractiveNarrator().name == "extractive"


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
               min_size=1, max_size=80).filter(str.strip)
UNIT = st.tuples(st.floats(0.01, 1), st.floats(0.01, 1))


@given(st.lists(st.tuples(TEXT, UNIT), min_size=1, max_size=6))
def test_narrator_property(items: list[tuple[str, tuple[float, float]]]) -> None:
    """The title is the episode's keyphrases or else the start of one sentence of one turn, at
    most 12 words (then "..."); the narrative has one line per turn."""
    episode = [turn(i, text, vector) for i, (text, vector) in enumerate(items)]
    title, narrative = ExtractiveNarrator().narrate(episode)
    candidates = {keyphrase_title(episode)} - {""}
    for t in episode:
        for sentence in re.split(r"(?<=[.!?])\s+", t.text.strip()):
            words = sentence.split()
            candidates.add(" ".join(words[:12]) + ("..." if len(words) > 12 else ""))
    assert title in candidates
    assert narrative.split("\n") == annotated_lines(episode)
    assert len(narrative.split("\n")) == len(episode)


# --- occurred -----------------------------------------------------------------------------------

def test_yesterday_is_that_day_until_next_midnight() -> None:
    start, end = occurred([turn(0, "I went to a support group yesterday."),
                           turn(1, "How did it go?")])
    assert (start, end) == (datetime(2023, 5, 7, tzinfo=UTC), datetime(2023, 5, 8, tzinfo=UTC))


def test_day_mentions_are_hulled_and_week_mentions_name_no_day() -> None:
    start, end = occurred([turn(0, "Last week was busy."), turn(1, "And yesterday too.")])
    assert (start, end) == (datetime(2023, 5, 7, tzinfo=UTC), datetime(2023, 5, 8, tzinfo=UTC))
    start, end = occurred([turn(0, "We met on May 3rd and again last Friday.")])
    assert (start, end) == (datetime(2023, 5, 3, tzinfo=UTC), datetime(2023, 5, 6, tzinfo=UTC))


def test_a_chat_mentioning_last_week_happened_when_it_was_held() -> None:
    """A 14 February chat that mentions "last week" in passing happened on 14 February: the
    Monday of the week before (2026-02-02) is no day anything happened on."""
    at = datetime(2026, 2, 14, 19, 0, tzinfo=UTC)
    episode = [turn(0, "Happy Valentine's! Last week was hectic at work.", at=at),
               turn(1, "Same here. Dinner tonight?", at=at + timedelta(seconds=60)),
               turn(2, "Yes, and a walk along the river after.", at=at + timedelta(seconds=120))]
    assert occurred(episode) == (datetime(2026, 2, 14, tzinfo=UTC),
                                 datetime(2026, 2, 15, tzinfo=UTC))
    d = draft(episode, ExtractiveNarrator())
    assert d.occurred_at.date().isoformat() == "2026-02-14"


def test_plans_do_not_date_what_happened() -> None:
    episode = [turn(0, "Let's hike next Saturday and go to Lisbon on May 20."), turn(1, "Deal!")]
    assert occurred(episode) == (episode[0].timestamp, episode[-1].timestamp)


def test_each_message_resolves_against_its_own_time() -> None:
    first = turn(0, "I ran a marathon yesterday.")
    later = turn(1, "Oh and yesterday I rested.", at=MONDAY + timedelta(days=2))
    start, end = occurred([first, later])
    assert (start, end) == (datetime(2023, 5, 7, tzinfo=UTC), datetime(2023, 5, 10, tzinfo=UTC))


@pytest.mark.parametrize("text", [
    "We moved here last year.",
    "I was in Paris in 2016.",
    "That was last May.",
    "I started a few days ago.",
    "We met a couple of weeks ago.",
    "Two weeks ago was a mess.",
    "This week has been calm.",
])
def test_vague_mentions_are_ignored(text: str) -> None:
    episode = [turn(0, text), turn(1, "Nice!"), turn(2, "Indeed.")]
    assert occurred(episode) == (episode[0].timestamp, episode[-1].timestamp)


def test_vague_mentions_do_not_widen_specific_ones() -> None:
    start, end = occurred([turn(0, "Last year I moved, and yesterday I unpacked the last box.")])
    assert (start, end) == (datetime(2023, 5, 7, tzinfo=UTC), datetime(2023, 5, 8, tzinfo=UTC))


def test_no_mention_gives_the_messages_own_span() -> None:
    episode = [turn(0, "Hello there."), turn(1, "Hi!"), turn(5, "Bye.")]
    assert occurred(episode) == (MONDAY, MONDAY + timedelta(seconds=150))
    one = [turn(0, "Hello there.")]
    assert occurred(one) == (MONDAY, MONDAY)


# --- episode_id and draft -----------------------------------------------------------------------

def test_episode_id_is_deterministic() -> None:
    a = episode_id("alice", "s1", "m0")
    assert a == episode_id("alice", "s1", "m0")
    assert re.fullmatch(r"e-[0-9a-f]{32}", a)
    others = {episode_id("bob", "s1", "m0"), episode_id("alice", "s2", "m0"),
              episode_id("alice", "s1", "m1"), a}
    assert len(others) == 4


def test_episode_id_fields_do_not_run_together() -> None:
    assert episode_id("ab", "c", "m") != episode_id("a", "bc", "m")
    assert episode_id("a", "b", "cm") != episode_id("a", "bc", "m")


def test_draft() -> None:
    episode = [turn(0, "I went to a support group yesterday.", (1.0, 0.0), speaker="caroline"),
               turn(1, "That sounds great, tell me more about how it went.", (R, R),
                    speaker="melanie"),
               turn(2, "It was moving and everyone was kind to each other there.", (0.0, 1.0),
                    speaker="caroline")]
    d = draft(episode, ExtractiveNarrator())
    title, narrative = ExtractiveNarrator().narrate(episode)
    assert d.turn_ids == ["m0", "m1", "m2"]
    assert (d.title, d.narrative) == (title, narrative)
    assert d.participants == ["caroline", "melanie"]
    assert (d.reported_at, d.reported_until) == (MONDAY, MONDAY + timedelta(seconds=60))
    assert (d.occurred_at, d.occurred_until) == (datetime(2023, 5, 7, tzinfo=UTC),
                                                 datetime(2023, 5, 8, tzinfo=UTC))
    assert d.formed_by == "extractive"


def test_draft_uses_the_narrator() -> None:
    class Fixed:
        name = "fixed"

        def narrate(self, turns: Sequence[Turn],
                    others: Sequence[Sequence[Turn]] = ()) -> tuple[str, str]:
            return "T", f"{len(turns)} turns, {len(others)} others"

    d = draft([turn(0, "Hello."), turn(1, "Hi.")], Fixed(), [[turn(2, "Bye.")]])
    assert (d.title, d.narrative, d.formed_by) == ("T", "2 turns, 1 others", "fixed")


def test_formation_reads_vectors_only_of_new_turns_and_their_context() -> None:
    episodes = ["e1", "e1", "e1", "e1", None, None, "e2", "e2", None]
    rows = [{"id": f"m{n}", "episode": e} for n, e in enumerate(episodes)]
    assert _compared(rows) == ["m2", "m3", "m4", "m5", "m6", "m7", "m8"]
    assert _compared([{"id": "m0", "episode": "e"}]) == []
    assert _compared([{"id": "m0", "episode": None}]) == ["m0"]
