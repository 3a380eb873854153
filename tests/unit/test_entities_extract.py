"""Entity extraction without an LLM (graphmem.entities.extract): names, speakers, dates, topics,
normal forms, and the rows ingest writes."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from graphmem.entities.extract import (
    Mention,
    date_names,
    inner_names,
    links,
    mentions,
    message_mentions,
    names,
    normalise,
    query_mentions,
    singular,
    topics,
)
from graphmem.messages import temporal


def test_normal_form_folds_case_possessives_and_punctuation() -> None:
    assert normalise("Caroline's") == "caroline"
    assert normalise("CAROLINE!") == "caroline"
    assert normalise("  Pride   Parade’s, ") == "pride parade"
    assert normalise("...") == ""


@given(st.text(max_size=60))
def test_normal_form_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert once == once.strip() and "  " not in once


def test_names_are_capitalised_runs_inside_sentences() -> None:
    text = "I went to Lisbon with Ana Silva. She loved the Pride Parade!"
    assert names(text) == ["lisbon", "ana silva", "pride parade"]


def test_a_sentence_opening_word_is_a_name_only_when_known() -> None:
    text = "Will went camping. Camping is fun."
    assert names(text) == []
    assert names(text, known={"will"}) == ["will"]


def test_a_sentence_opening_word_no_english_word_is_a_name() -> None:
    assert names("Tariq lost again. Kraków was cold. Haha, she'll cry. Ugh.") == [
        "tariq", "kraków"]
    assert names("Flow House is lovely. Swimming helps.") == ["flow house"]


def test_letters_of_every_script_are_kept() -> None:
    text = "The flat is in Príncipe Real, near São Paulo Café and Zoë Müller's bakery."
    assert names(text) == ["príncipe real", "são paulo café", "zoë müller"]
    assert normalise("Príncipe Real") == "príncipe real"
    assert topics("we had pastéis de nata at the café") == ["pastéis", "nata", "café"]


def test_names_span_titles_and_connectors() -> None:
    assert names("My physio, Dr. Okafor, works at Hospital de Santa Maria.") == [
        "dr okafor", "hospital de santa maria"]
    assert names("Mum's surgery went well and Dad is fine.") == ["mum", "dad"]


def test_greetings_pronouns_and_months_are_not_names() -> None:
    assert names("Hey Mel! Oh I love it. We met in May, on Monday.") == ["mel"]


def test_inner_names_are_the_words_capitalised_inside_sentences() -> None:
    assert inner_names(["Caroline met Jon.", "Jon said hi to Caroline's mom."]) == {
        "jon", "caroline"}


def test_topics_are_noun_phrases_singular_and_bounded() -> None:
    got = topics("I went to a support group about painting classes.")
    assert got == ["support group", "painting class"]
    assert topics("the 2023 r2d2 and abc123 of it") == []  # stopwords and non-words
    assert len(topics("the alpha, the bravo, the charlie, the delta, the echo, the foxtrot, "
                      "the hotel, the india, the juliet", limit=5)) == 5


def test_verbs_adjectives_and_adverbs_are_no_topics() -> None:
    """A user's 24 messages once gave 95 entities, "moved" and "called" among them."""
    assert topics("We finally moved last month and I called you twice.") == []
    assert topics("I work at the hospital and I love my work.") == ["hospital", "work"]
    assert topics("Everyone was so kind, it felt real.") == []
    assert topics("We went hiking, then I got a dog.") == ["hiking", "dog"]
    assert topics("Ice it and take a rest.") == ["rest"]
    assert topics("Cats hate the rain. His brother's wedding.") == [
        "cat", "rain", "brother", "wedding"]


def test_singular() -> None:
    assert [singular(w) for w in ("stories", "classes", "games", "kids", "glass", "bus",
                                  "tennis")] == ["story", "class", "game", "kid", "glass",
                                                 "bus", "tennis"]


def test_dates_become_months_or_years() -> None:
    assert date_names([(date(2023, 5, 7), date(2023, 5, 7))]) == ["2023-05"]
    assert date_names([(date(2023, 3, 1), date(2023, 5, 31))]) == ["2023"]
    assert date_names([(date(2022, 12, 1), date(2023, 1, 31))]) == []


def test_mentions_of_a_turn() -> None:
    said = datetime(2023, 5, 8, 13, 57, tzinfo=UTC)
    text = "I went to a LGBTQ support group yesterday with Jon."
    got = mentions(text, "Caroline", temporal.event_dates(text, said))
    assert got[:4] == [Mention("caroline", "speaker"), Mention("lgbtq", "name"),
                       Mention("jon", "name"), Mention("2023-05", "date")]
    assert Mention("support group", "topic") in got
    assert len({m.name for m in got}) == len(got)


def test_query_mentions_take_a_capitalised_first_word() -> None:
    got = [m.name for m in query_mentions("Caroline went where after the Pride Parade?")]
    assert got[:2] == ["caroline", "pride parade"]


def test_links_are_the_lemmas_of_nouns_and_verbs() -> None:
    got = links("I went to a pottery class yesterday and painted a bowl with my kids.")
    assert got == ["noun:pottery", "noun:class", "noun:bowl", "noun:kid", "verb:paint"]
    # names and words given to leave out are no links; adjectives and stopwords never are
    assert links("Then Caroline joined a new support group.", exclude={"caroline"}) == [
        "noun:support", "noun:group", "verb:join"]
    assert links("It was so lovely and I am glad.") == []


def test_query_mentions_add_links_but_of_the_words_they_name() -> None:
    query = "Who painted the bowls at Caroline's pottery class?"
    got = query_mentions(query)
    assert [(m.name, m.kind) for m in got] == [
        ("caroline", "name"), ("bowl", "topic"), ("pottery class", "topic"),
        ("noun:bowl", "link"), ("noun:pottery", "link"), ("noun:class", "link"),
        ("verb:paint", "link")]
    assert "link" not in {m.kind for m in mentions(query)}


def test_message_mentions_use_the_batch_as_known_names() -> None:
    rows: list[dict[str, Any]] = [
        {"id": "a", "owner": "o", "speaker": "Caroline", "text": "Melanie, hi!",
         "event_starts": [], "event_ends": []},
        {"id": "b", "owner": "o", "speaker": "Melanie", "text": "Caroline painted a lake.",
         "event_starts": [date(2023, 5, 7)], "event_ends": [date(2023, 5, 7)]},
    ]
    out = message_mentions(rows)
    assert [r for r in out if r["message_id"] == "a"] == [
        {"message_id": "a", "owner": "o", "name": "caroline", "kind": "speaker"},
        {"message_id": "a", "owner": "o", "name": "melanie", "kind": "name"}]
    of_b = {(r["name"], r["kind"]) for r in out if r["message_id"] == "b"}
    assert of_b == {("melanie", "speaker"), ("caroline", "name"), ("2023-05", "date"),
                    ("lake", "topic"), ("noun:lake", "link"), ("verb:paint", "link")}
    # one lock order for every batch: by owner, then entity name
    assert out == sorted(out, key=lambda r: (r["owner"], r["name"], r["message_id"]))


@given(st.text(max_size=300), st.text(max_size=20))
def test_mentions_never_fail_and_are_normal_forms(text: str, speaker: str) -> None:
    got = mentions(text, speaker)
    assert all(m.name and normalise(m.name) == m.name for m in got)
    assert len({m.name for m in got}) == len(got)
