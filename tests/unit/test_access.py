"""`Access`: what a key grants, and the refusals the facade raises from it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphmem.access import MAX_KEY_OWNERS, Access
from graphmem.config import Settings
from graphmem.errors import Forbidden, NotFound

names = st.text(min_size=1, max_size=20)


def test_a_tenant_name_grants_everything() -> None:
    access = Access.of("acme")
    assert access == Access(tenant="acme") and access.everything
    assert access.sees("anyone") and access.sees(None)
    access.write("storing messages")
    access.tenant_wide("the job list")
    assert access.owner("bob") == "bob"


def test_an_owner_key_refuses_other_owners_naming_the_field() -> None:
    access = Access(tenant="acme", owners=frozenset({"alice"}))
    assert not access.everything
    assert access.owner("alice") == "alice"
    with pytest.raises(Forbidden) as refused:
        access.owner("bob")
    assert refused.value.field == "owner" and "'bob'" in refused.value.detail
    with pytest.raises(Forbidden) as refused:
        access.each_owner(["alice", "alice", "bob"], "messages")
    assert refused.value.field == "messages[2].owner"
    with pytest.raises(Forbidden, match="spans the tenant"):
        access.tenant_wide("the job list")
    access.write("storing messages")  # not read-only


def test_another_owners_thing_is_not_found_and_a_thing_without_owner_is_hidden() -> None:
    access = Access(tenant="acme", owners=frozenset({"alice"}))
    access.found("alice", "message", "m1")
    with pytest.raises(NotFound) as hidden:
        access.found("bob", "message", "m1")
    assert hidden.value.detail == "no message 'm1'"  # the words for an id never stored
    with pytest.raises(NotFound):
        access.found(None, "fact", "f1")


def test_a_read_only_key_refuses_writes_only() -> None:
    access = Access(tenant="acme", read_only=True)
    assert not access.everything
    with pytest.raises(Forbidden, match="read-only: storing messages") as refused:
        access.write("storing messages")
    assert refused.value.field is None
    access.tenant_wide("the job list")
    assert access.owner("bob") == "bob"


@given(st.frozensets(names, min_size=1, max_size=5), names)
def test_sees_exactly_its_owners(owners: frozenset[str], other: str) -> None:
    access = Access(tenant="t", owners=owners)
    assert access.sees(other) == (other in owners)
    assert all(access.sees(o) for o in owners)


@pytest.mark.parametrize("bad", [
    {"tenant": ""}, {"tenant": "t", "owners": []}, {"tenant": "t", "owners": [""]},
    {"tenant": "t", "owners": ["x" * 201]}, {"tenant": "t", "read": True},
    {"tenant": "t", "owners": [f"o{i}" for i in range(MAX_KEY_OWNERS + 1)]},
])
def test_malformed_grants_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Access.model_validate(bad)


def test_settings_read_both_forms_of_key(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = {"h1": "acme", "h2": {"tenant": "acme", "owners": ["alice", "bob"], "read_only": True}}
    monkeypatch.setenv("GRAPHMEM_API_KEYS", json.dumps(keys))
    got = Settings().api_keys
    assert got["h1"] == "acme"
    assert Access.of(got["h2"]) == Access(tenant="acme", owners=frozenset({"alice", "bob"}),
                                          read_only=True)
    monkeypatch.setenv("GRAPHMEM_API_KEYS", json.dumps({"h": {"tenant": "a", "owners": []}}))
    with pytest.raises(ValidationError):
        Settings()
