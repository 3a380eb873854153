"""Unit tests of graphmem.config: settings validation, API key hashing, the Neo4j password."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from graphmem.config import Settings, hash_api_key


@pytest.fixture(autouse=True)
def _no_graphmem_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings read GRAPHMEM_* variables; these tests state every value they depend on."""
    for name in list(os.environ):
        if name.upper().startswith("GRAPHMEM_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::", "10.0.0.1"])
def test_anonymous_with_non_loopback_host_refused(host: str) -> None:
    with pytest.raises(ValidationError, match="loopback"):
        Settings(allow_anonymous=True, host=host)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_anonymous_with_loopback_host_accepted(host: str) -> None:
    s = Settings(allow_anonymous=True, host=host)
    assert s.allow_anonymous is True
    assert s.host == host


def test_non_loopback_host_without_anonymous_is_fine() -> None:
    assert Settings(host="0.0.0.0").allow_anonymous is False


def test_environment_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_MAX_BATCH", "7")
    assert Settings().max_batch == 7


def test_hash_api_key_is_sha256_hex() -> None:
    assert hash_api_key("secret") == hashlib.sha256(b"secret").hexdigest()
    assert hash_api_key("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert len(hash_api_key("k")) == 64
    assert hash_api_key("é") == hashlib.sha256("é".encode()).hexdigest()


def test_bolt_uri_default_and_explicit() -> None:
    assert Settings(neo4j_bolt_port=17687).bolt_uri == "bolt://127.0.0.1:17687"
    assert Settings(neo4j_uri="neo4j://db:7687").bolt_uri == "neo4j://db:7687"


def test_password_explicit_wins_over_file(tmp_path: Path) -> None:
    (tmp_path / "password").write_text("from-file\n", encoding="utf-8")
    s = Settings(neo4j_instance_dir=tmp_path, neo4j_password="explicit")
    assert s.resolved_password() == "explicit"


def test_password_read_from_file_stripped(tmp_path: Path) -> None:
    (tmp_path / "password").write_text("  from-file\n", encoding="utf-8")
    s = Settings(neo4j_instance_dir=tmp_path)
    assert s.password_file == tmp_path / "password"
    assert s.resolved_password() == "from-file"


def test_password_none_without_file(tmp_path: Path) -> None:
    assert Settings(neo4j_instance_dir=tmp_path / "missing").resolved_password() is None


def test_password_none_when_auth_disabled(tmp_path: Path) -> None:
    (tmp_path / "password").write_text("from-file", encoding="utf-8")
    s = Settings(neo4j_instance_dir=tmp_path, neo4j_password="explicit", neo4j_auth=False)
    assert s.resolved_password() is None


def test_password_is_secret_in_repr() -> None:
    assert "hunter2" not in repr(Settings(neo4j_password="hunter2"))
