"""Unit tests of graphmem.ingest: sentence units, derived ids and batch preparation. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphmem.config import Settings
from graphmem.errors import Conflict, InvalidInput
from graphmem.ingest import derived_id, prepare, split_sentences
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
