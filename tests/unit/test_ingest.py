"""Unit tests of graphmem.messages.ingest: sentence and passage units, derived ids, batch
preparation and the per-batch budget. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphmem.config import Settings
from graphmem.embeddings import WINDOW_FALLBACK, token_counts
from graphmem.errors import Conflict, InvalidInput, TooLarge
from graphmem.messages.ingest import (
    PASSAGE_WORDS,
    check_tokens,
    derived_id,
    prepare,
    split_sentences,
    split_units,
)
from graphmem.models import MessageIn

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def msg(text: str = "hello there", **fields: Any) -> MessageIn:
    base: dict[str, Any] = {
        "owner": "alice", "session_id": "s1", "speaker": "Caroline", "text": text,
        "timestamp": T0,
    }
    return MessageIn(**{**base, **fields})


@pytest.fixture
def settings() -> Settings:
    return Settings(max_batch=3, max_text_chars=50)


# --- split_sentences ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("One. Two! Three? Four… Five", ["One.", "Two!", "Three?", "Four…", "Five"]),
        ("line one\nline two", ["line one", "line two"]),
        ("first\n\n\nsecond", ["first", "second"]),
        ("Hi.\n\nThere", ["Hi.", "There"]),
        ("no end mark", ["no end mark"]),
        ("3.5 km is e.g.far", ["3.5 km is e.g.far"]),  # no space after the dot: no split
        ("  padded  ", ["padded"]),
        ("Wait...  what?!  Yes.", ["Wait...", "what?!", "Yes."]),
    ],
)
def test_split_sentences(text: str, units: list[str]) -> None:
    assert split_sentences(text) == units


def test_blank_pieces_are_dropped() -> None:
    assert split_sentences("\n\nA.   \n  \n B.\n") == ["A.", "B."]


def test_long_sentence_cut_at_max_words() -> None:
    words = [f"w{i}" for i in range(7)]
    assert split_sentences(" ".join(words), max_words=3) == [
        "w0 w1 w2", "w3 w4 w5", "w6",
    ]


def test_whitespace_inside_a_unit_is_normalised() -> None:
    assert split_sentences("a \t  b") == ["a b"]


@given(st.text().filter(lambda t: t.strip()), st.integers(1, 12))
def test_property_units_keep_every_word_and_fit(text: str, max_words: int) -> None:
    units = split_sentences(text, max_words=max_words)
    assert units  # never empty for non-blank text
    assert all(u.strip() for u in units)
    assert all(len(u.split()) <= max_words for u in units)
    assert " ".join(units).split() == text.split()


# --- split_units: sentences for short texts, passages for long ones -----------------------------


def test_short_texts_are_split_exactly_as_sentences() -> None:
    text = "I moved to Lisbon. It is sunny!\nWe should meet… Maybe in May?"
    assert split_units(text, max_units=64) == split_sentences(text)
    assert split_units(text, max_units=5) == split_sentences(text)  # exactly at the cap


def test_long_text_becomes_passages_of_consecutive_sentences() -> None:
    sentences = [f"Sentence number {i} has six words." for i in range(100)]  # 600 words
    units = split_units(" ".join(sentences), max_units=64)
    assert len(units) == 4  # 26 sentences (156 words) per passage, then the rest
    assert units[0] == " ".join(sentences[:26])
    assert all(len(u.split()) <= PASSAGE_WORDS for u in units)
    assert " ".join(units) == " ".join(sentences)


def test_passage_units_make_a_chat_turn_one_unit_and_a_long_text_passages() -> None:
    turn = "I moved to Lisbon. It is sunny!\nWe should meet… Maybe in May?"
    assert split_units(turn, max_units=64, unit="passage") == [
        "I moved to Lisbon. It is sunny! We should meet… Maybe in May?"]
    sentences = [f"Sentence number {i} has six words." for i in range(100)]
    long = " ".join(sentences)
    assert split_units(long, max_units=64, unit="passage") == split_units(long, max_units=64)
    assert split_units(long, max_units=2, unit="passage") == split_units(long, max_units=2)
    one = "word " * 400 + "end."  # one sentence of 401 words: cut at 80, packed to 160
    units = split_units(one, max_units=64, unit="passage")
    assert [len(u.split()) for u in units] == [160, 160, 81]


def test_passages_grow_when_the_cap_would_be_exceeded() -> None:
    text = "word. " * 20_000  # 20,000 one-word sentences: 125 passages of 160 words
    units = split_units(text, max_units=64)
    assert len(units) <= 64
    assert " ".join(units).split() == text.split()


def test_a_cap_of_one_keeps_the_whole_text_in_one_unit() -> None:
    assert split_units("A. B. C.", max_units=1) == ["A. B. C."]


def test_a_maximal_text_is_capped_and_keeps_every_word() -> None:
    # 100,000 characters of conversational English (~18,000 words) at the default cap
    sentence = "We went hiking near the lake last weekend and the kids loved it. "
    text = (sentence * (100_000 // len(sentence) + 1))[:100_000]
    units = split_units(text, max_units=Settings().max_units_per_message)
    assert len(units) <= Settings().max_units_per_message
    assert " ".join(units).split() == text.split()


_words = st.text(alphabet="abc .!?\n", min_size=1, max_size=6)


@given(st.lists(_words, min_size=1, max_size=400).map("".join).filter(lambda t: t.strip()),
       st.integers(1, 20), st.integers(1, 30), st.integers(1, 12))
def test_property_units_capped_in_order_and_within_the_word_limit(
    text: str, max_units: int, passage_words: int, max_words: int
) -> None:
    units = split_units(text, max_units, passage_words=passage_words, max_words=max_words)
    sentences = split_sentences(text, max_words)
    assert 1 <= len(units) <= max_units
    assert all(u.strip() for u in units)
    assert " ".join(units).split() == text.split()  # every word, in order, once
    if len(sentences) <= max_units:
        assert units == sentences
    else:  # passages: within the passage size, or grown just enough to meet the cap
        words = len(text.split())
        grown = -(-words // max(max_units - 1, 1)) + max_words - 1
        limit = max(passage_words, max_words, grown if max_units > 1 else words)
        assert all(len(u.split()) <= limit for u in units)


@given(st.integers(1, 400), st.integers(2, 64))
def test_property_passages_stay_in_the_window_while_the_cap_allows(
    n_sentences: int, max_units: int
) -> None:
    # sentences of 7 words: passages of 22 sentences (154 words) fit whenever there are few
    text = " ".join(f"s{i} has exactly seven words in it." for i in range(n_sentences))
    units = split_units(text, max_units)
    assert len(units) <= max_units
    if -(-n_sentences // 22) <= max_units:
        assert all(len(u.split()) <= PASSAGE_WORDS for u in units)


# --- derived_id ---------------------------------------------------------------------------------


def test_derived_id_is_deterministic() -> None:
    assert derived_id(msg()) == derived_id(msg())
    assert derived_id(msg()).startswith("m-")
    assert len(derived_id(msg())) == 2 + 32


@pytest.mark.parametrize(
    "change",
    [
        {"owner": "bob"},
        {"session_id": "s2"},
        {"speaker": "Melanie"},
        {"text": "hello there!"},
        {"timestamp": T0 + timedelta(seconds=1)},
    ],
)
def test_derived_id_is_content_sensitive(change: dict[str, Any]) -> None:
    assert derived_id(msg(**change)) != derived_id(msg())


def test_derived_id_same_instant_in_another_offset_is_the_same_message() -> None:
    cest = timezone(timedelta(hours=2))
    assert derived_id(msg(timestamp=T0.astimezone(cest))) == derived_id(msg())


def test_names_refuse_control_characters_so_derived_ids_stay_unambiguous() -> None:
    # derived_id joins fields with \x1f; names cannot contain it, so boundaries are unambiguous
    for field in ("owner", "session_id", "speaker", "id"):
        with pytest.raises(ValidationError):
            msg(**{field: "a\x1fb"})


# --- prepare ------------------------------------------------------------------------------------


def test_prepare_assigns_ids(settings: Settings) -> None:
    given_id, anonymous = msg(id="client-1"), msg(text="other")
    prepared = prepare([given_id, anonymous], settings)
    assert [r["id"] for r in prepared.messages] == ["client-1", derived_id(anonymous)]
    row = prepared.messages[0]
    assert row["search_text"] == "Caroline: hello there"
    assert row["metadata_json"] == "{}"
    assert row["index"] == 0


def test_prepare_collapses_exact_duplicates(settings: Settings) -> None:
    prepared = prepare([msg(), msg(), msg(id="x")], settings)
    assert len(prepared.messages) == 2
    assert [r["index"] for r in prepared.messages] == [0, 2]


def test_prepare_lists_sessions_in_one_lock_order(settings: Settings) -> None:
    batch = [msg(owner="b", session_id="s1"), msg(owner="a", session_id="s2", text="x"),
             msg(owner="a", session_id="s1", text="y")]
    sessions = prepare(batch, settings).sessions
    assert [(s["owner"], s["session_id"]) for s in sessions] == [("a", "s1"), ("a", "s2"),
                                                                 ("b", "s1")]


def test_prepare_same_id_other_content_conflicts(settings: Settings) -> None:
    with pytest.raises(Conflict) as info:
        prepare([msg(id="x", text="one"), msg(id="x", text="two")], settings)
    assert "messages[1].id" in info.value.detail


def test_prepare_same_id_other_metadata_conflicts(settings: Settings) -> None:
    with pytest.raises(Conflict):
        prepare([msg(id="x", metadata={"k": 1}), msg(id="x", metadata={"k": 2})], settings)


def test_prepare_batch_limit(settings: Settings) -> None:
    prepare([msg(text=f"t{i}") for i in range(3)], settings)  # exactly at the limit: fine
    with pytest.raises(InvalidInput) as info:
        prepare([msg(text=f"t{i}") for i in range(4)], settings)
    assert info.value.field == "messages"


def test_prepare_text_limit_names_the_message(settings: Settings) -> None:
    prepare([msg(text="x" * 50)], settings)  # exactly at the limit: fine
    with pytest.raises(InvalidInput) as info:
        prepare([msg(text="ok"), msg(text="x" * 51)], settings)
    assert info.value.field == "messages[1].text"


def test_prepare_groups_sessions_with_min_and_max(settings: Settings) -> None:
    batch = [
        msg(text="late", timestamp=T0 + timedelta(hours=2)),
        msg(text="other session", session_id="s2"),
        msg(text="early", timestamp=T0 - timedelta(hours=1)),
    ]
    prepared = prepare(batch, settings)
    sessions = {s["session_id"]: s for s in prepared.sessions}
    assert set(sessions) == {"s1", "s2"}
    s1 = sessions["s1"]
    assert s1["owner"] == "alice"
    assert s1["min_ts"] == T0 - timedelta(hours=1)
    assert s1["max_ts"] == T0 + timedelta(hours=2)
    assert s1["ids"] == {derived_id(batch[0]), derived_id(batch[2])}
    assert sessions["s2"]["min_ts"] == sessions["s2"]["max_ts"] == T0


def test_prepare_sessions_are_per_owner(settings: Settings) -> None:
    prepared = prepare([msg(owner="alice"), msg(owner="bob")], settings)
    assert sorted((s["owner"], s["session_id"]) for s in prepared.sessions) == [
        ("alice", "s1"), ("bob", "s1"),
    ]


def test_prepare_empty_batch(settings: Settings) -> None:
    prepared = prepare([], settings)
    assert prepared.messages == []
    assert prepared.sessions == []
    assert prepared.units == {}


# --- the per-batch budget -----------------------------------------------------------------------


def test_prepare_gives_each_message_its_units() -> None:
    prepared = prepare([msg("One. Two.", id="a"), msg("Three.", id="b"), msg("One. Two.", id="a")],
                       Settings())
    assert prepared.units == {"a": ["One.", "Two."], "b": ["Three."]}


def test_budget_of_characters_names_messages_and_the_limit() -> None:
    settings = Settings(max_batch_chars=20)
    prepare([msg("x" * 10), msg("y" * 10)], settings)  # exactly at the budget: fine
    with pytest.raises(TooLarge) as info:
        prepare([msg("x" * 10), msg("y" * 11)], settings)
    err = info.value
    assert (err.status, err.field, err.limit, err.actual) == (413, "messages", 20, 21)
    assert "21 characters" in err.detail and "at most 20" in err.detail


def test_budget_of_characters_counts_repeats_inside_the_batch() -> None:
    with pytest.raises(TooLarge):
        prepare([msg("x" * 15), msg("x" * 15)], Settings(max_batch_chars=20))


def test_budget_of_units_names_messages_and_the_limit() -> None:
    settings = Settings(max_batch_units=4)
    prepare([msg("A. B."), msg("C. D.")], settings)  # exactly at the budget: fine
    with pytest.raises(TooLarge) as info:
        prepare([msg("A. B."), msg("C. D. E.")], settings)
    err = info.value
    assert (err.status, err.field, err.limit, err.actual) == (413, "messages", 4, 5)
    assert "5 retrieval units" in err.detail


def test_budget_of_units_counts_a_repeat_inside_the_batch_once() -> None:
    prepared = prepare([msg("A. B. C."), msg("A. B. C.")], Settings(max_batch_units=3))
    assert len(prepared.messages) == 1


def test_budget_of_units_counts_passages_not_sentences() -> None:
    long = " ".join(f"Sentence {i} is here." for i in range(1000))  # 1000 sentences
    prepared = prepare([msg(long)], Settings(max_units_per_message=64, max_batch_units=64))
    (units,) = prepared.units.values()
    assert len(units) <= 64


def test_too_large_is_an_invalid_input_with_status_413() -> None:
    err = TooLarge("messages", "too much", limit=1, actual=2)
    assert isinstance(err, InvalidInput)
    assert err.problem == "too much"


def test_budget_of_word_pieces_names_messages_and_the_limit() -> None:
    settings = Settings(max_batch_tokens=100)
    check_tokens([60, 40], settings)  # exactly at the budget: fine
    with pytest.raises(TooLarge) as info:
        check_tokens([60, 41], settings)
    err = info.value
    assert (err.status, err.field, err.limit, err.actual) == (413, "messages", 100, 101)
    assert "101 word pieces" in err.detail


def test_an_embedder_without_a_tokenizer_is_charged_an_upper_bound() -> None:
    class Plain:
        name = "plain"
        dimensions = 2

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[0.0, 1.0] for _ in texts]

    assert token_counts(Plain(), ["a b c", "x" * 1000]) == [3, WINDOW_FALLBACK]
