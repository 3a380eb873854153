"""`KeyRing` and `resolve_access`: keys from the environment and from a keys file that is read
again when it changes."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from graphmem.access import Access
from graphmem.api.auth import RECHECK_S, KeyRing, resolve_access
from graphmem.config import Settings, hash_api_key
from graphmem.errors import Unauthorized
from tests.support.fakes import Clock


def _write(path: Path, keys: dict[str, object]) -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(json.dumps({hash_api_key(k): g for k, g in keys.items()}))
    os.utime(path, ns=(before + 10**9, before + 10**9))  # a new mtime, however fast the disk


def _ring(tmp_path: Path, clock: Clock, **settings: object) -> KeyRing:
    return KeyRing(Settings(api_keys_file=tmp_path / "keys.json", **settings),  # type: ignore[arg-type]
                   clock)


def bearer(key: str) -> str:
    return f"Bearer {key}"


def test_keys_of_the_environment_and_of_the_file(tmp_path: Path) -> None:
    clock = Clock()
    _write(tmp_path / "keys.json", {"f": {"tenant": "acme", "owners": ["alice"]}, "both": "b"})
    ring = _ring(tmp_path, clock, api_keys={hash_api_key("e"): "env-t",
                                            hash_api_key("both"): "env-b"})
    assert resolve_access(ring, bearer("e")) == Access(tenant="env-t")
    assert resolve_access(ring, bearer("f")) == Access(tenant="acme",
                                                       owners=frozenset({"alice"}))
    assert resolve_access(ring, bearer("both")).tenant == "b"  # the file's
    with pytest.raises(Unauthorized, match="unknown API key"):
        resolve_access(ring, bearer("nope"))
    with pytest.raises(Unauthorized, match="missing"):
        resolve_access(ring, None)


def test_a_change_of_the_file_is_taken_within_a_second(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "keys.json"
    _write(path, {"old": "acme"})
    ring = _ring(tmp_path, clock)
    _write(path, {"new": "acme"})
    assert ring.get(hash_api_key("old")) is not None  # not looked at again yet
    clock.now += RECHECK_S
    assert ring.get(hash_api_key("old")) is None  # revoked
    assert ring.get(hash_api_key("new")) == Access(tenant="acme")


def test_a_broken_file_keeps_the_last_good_keys(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    clock, path = Clock(), tmp_path / "keys.json"
    _write(path, {"k": "acme"})
    ring = _ring(tmp_path, clock)
    path.write_text('{"not a hash": "acme"}')
    os.utime(path, ns=(1, 1))
    clock.now += RECHECK_S
    with caplog.at_level(logging.ERROR, logger="graphmem.api"):
        assert ring.get(hash_api_key("k")) == Access(tenant="acme")
    assert "stay in force" in caplog.text and "key 1: not the sha256" in caplog.text
    path.unlink()
    clock.now += RECHECK_S
    assert ring.get(hash_api_key("k")) is None  # a file that is gone grants nothing


def test_a_file_that_cannot_be_read_at_start_stops_the_start(tmp_path: Path) -> None:
    (tmp_path / "keys.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"keys\.json: not a JSON object"):
        _ring(tmp_path, Clock())
    (tmp_path / "keys.json").unlink()
    with pytest.raises(ValueError, match="cannot be read"):
        _ring(tmp_path, Clock())


def test_anonymous_when_allowed() -> None:
    ring = KeyRing(Settings(allow_anonymous=True, anonymous_tenant="dev-x"))
    assert resolve_access(ring, None) == Access(tenant="dev-x")


def test_the_caller_is_named_by_its_keys_id() -> None:
    from graphmem.config import caller_of, key_id

    assert caller_of("Bearer secret-key") == key_id("secret-key") == hash_api_key(
        "secret-key")[:12]
    assert caller_of(None) == caller_of("Bearer ") == "anonymous"
