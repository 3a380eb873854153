"""Unit tests of graphmem.retrieval.settings: the value object and its named presets."""

from __future__ import annotations

import dataclasses

import pytest

from graphmem.errors import InvalidInput
from graphmem.retrieval.settings import PRESETS, RetrievalSettings, preset


@pytest.mark.parametrize("name", ["default", "fast", "wide", "deep"])
def test_presets_exist(name: str) -> None:
    assert isinstance(preset(name), RetrievalSettings)
    assert preset(name) is PRESETS[name]


def test_default_preset_is_the_plain_default() -> None:
    assert preset("default") == RetrievalSettings()
    assert preset("default").rrf_k == 60


def test_fast_is_narrower_and_wide_is_wider_than_default() -> None:
    fast, default, wide = preset("fast"), preset("default"), preset("wide")
    assert fast.candidates < default.candidates < wide.candidates
    assert fast.expand_before + fast.expand_after < default.expand_before + default.expand_after
    assert wide.expand_before + wide.expand_after > default.expand_before + default.expand_after


def test_unknown_preset_raises_invalid_input_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as info:
        preset("nope")
    assert info.value.field == "preset"
    assert "nope" in info.value.detail
    assert "default" in info.value.problem  # it lists the known names


def test_with_returns_a_changed_copy_and_leaves_the_original() -> None:
    original = RetrievalSettings()
    changed = original.with_(candidates=7, max_messages=12)
    assert changed.candidates == 7
    assert changed.max_messages == 12
    assert changed.rrf_k == original.rrf_k
    assert original.candidates == 50
    assert original.max_messages is None
    assert changed is not original


def test_with_on_a_preset_does_not_change_the_preset() -> None:
    before = PRESETS["fast"]
    preset("fast").with_(candidates=999)
    assert PRESETS["fast"] == before
    assert preset("fast").candidates == 20


def test_settings_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RetrievalSettings().candidates = 3  # type: ignore[misc]


def test_with_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError):
        RetrievalSettings().with_(no_such_knob=1)
