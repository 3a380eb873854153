"""API keys: ``Authorization: Bearer <key>``; the server keeps only sha256 hashes, each mapped
to what it grants (`graphmem.access.Access`: a tenant, maybe some of its owners only, maybe
read only). `KeyRing` holds them: ``GRAPHMEM_API_KEYS`` (read at start) and the keys file
``GRAPHMEM_API_KEYS_FILE``, read again when it changes (checked at most once a second), so keys
are added and revoked without a restart. `KeyGate` refuses a request to ``/v1`` without a valid
key before its body is read; `caller` resolves a request's key once for every part that reads
it (the key check, the rate gate, the routes, the request log)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.access import Access, Grant, parse_keys
from graphmem.config import KEY_ID_CHARS, Settings, hash_api_key
from graphmem.errors import Unauthorized

from .problems import problem

PROTECTED_PREFIX = "/v1"
RECHECK_S = 1.0
"""How often, at most, the keys file's size and modification time are looked at."""
log = logging.getLogger("graphmem.api")


def read_keys_file(path: Path) -> dict[str, Grant]:
    """The keys of a keys file; ValueError naming the file and what is wrong in it."""
    try:
        return parse_keys(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"API keys file {path}: cannot be read ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"API keys file {path}: {exc}") from None


def _granting(grants: Mapping[str, Grant]) -> dict[str, Access]:
    """Configured grants as what they grant, made once (not per request)."""
    return {hashed: Access.of(grant) for hashed, grant in grants.items()}


class KeyRing:
    """The keys a server accepts. Those of ``GRAPHMEM_API_KEYS`` are fixed for the process;
    those of the keys file follow the file: a key added to it is accepted, and one removed from
    it refused, within `RECHECK_S` (a key in both is the file's). A file that cannot be read or
    parsed at start stops the server; later, its last good keys stay in force and the error is
    logged (a typo never locks every client out, nor lets anyone in). A file that is gone
    grants nothing."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.allow_anonymous = settings.allow_anonymous
        self.anonymous_tenant = settings.anonymous_tenant
        self._fixed = _granting(settings.api_keys)
        self._path = settings.api_keys_file
        self._clock = clock
        self._lock = threading.Lock()
        self._from_file: dict[str, Access] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._checked = clock()
        if self._path is not None:
            self._stamp = self._stat()
            self._from_file = _granting(read_keys_file(self._path))

    def get(self, hashed: str) -> Access | None:
        """What the key with this sha256 hex grants; None for an unknown key."""
        if self._path is not None and self._clock() - self._checked >= RECHECK_S:
            self._reload()
        return self._from_file.get(hashed) or self._fixed.get(hashed)

    def _stat(self) -> tuple[int, int, int] | None:
        assert self._path is not None
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _reload(self) -> None:
        assert self._path is not None
        with self._lock:
            if self._clock() - self._checked < RECHECK_S:
                return  # another request just looked
            self._checked = self._clock()
            stamp = self._stat()
            if stamp == self._stamp:
                return
            self._stamp = stamp
            if stamp is None:
                log.warning("API keys file %s is gone: its %d key(s) are refused",
                            self._path, len(self._from_file))
                self._from_file = {}
                return
            try:
                keys = read_keys_file(self._path)
            except ValueError as exc:
                log.error("%s; the %d key(s) read before stay in force", exc,
                          len(self._from_file))
                return
            self._from_file = _granting(keys)
            log.info("API keys file %s read again: %d key(s)", self._path, len(keys))


@dataclass(frozen=True)
class Caller:
    """Who sent one request, read once from its ``Authorization`` header (`caller`)."""

    access: Access | None
    """What its key grants; None when it has no valid key (``refused`` says why)."""
    refused: Unauthorized | None
    hashed: str | None
    """The sha256 of the bearer key it sent, known or not; None without one."""

    @property
    def key_id(self) -> str | None:
        """Its key's public id (`graphmem.config.key_id`), for the request log."""
        return self.hashed[:KEY_ID_CHARS] if self.hashed else None

    @property
    def name(self) -> str:
        """Who it is in the audit records: its key's id, or ``anonymous``."""
        return self.key_id or "anonymous"

    def granted(self) -> Access:
        """What its key grants; `Unauthorized` when it has no valid key."""
        if self.access is None:
            raise self.refused or Unauthorized("unknown API key")
        return self.access


CALLER = "graphmem.caller"
"""Where a request's `Caller` is kept in its ASGI scope's state."""


def caller(keys: KeyRing, scope: MutableMapping[str, Any]) -> Caller:
    """The request's caller, resolved once and kept in its scope: the key check, the rate
    gate, the routes and the request log all read the same one."""
    state = scope.setdefault("state", {})
    found = state.get(CALLER)
    if not isinstance(found, Caller):
        found = state[CALLER] = _caller(
            keys, [v for k, v in scope.get("headers", []) if k == b"authorization"])
    return found


def _caller(keys: KeyRing, values: list[bytes]) -> Caller:
    header = values[-1].decode("latin-1") if values else None
    key = _bearer(header)
    hashed = hash_api_key(key) if key else None
    try:
        if len(values) > 1:
            raise Unauthorized("send one Authorization header, not several")
        return Caller(_granted(keys, header, hashed), None, hashed)
    except Unauthorized as exc:
        return Caller(None, exc, hashed)


def _bearer(authorization: str | None) -> str | None:
    """The key of ``Bearer <key>``; None for anything else."""
    scheme, _, key = (authorization or "").partition(" ")
    return key.strip() if scheme.lower() == "bearer" and key.strip() else None


def _granted(keys: KeyRing, authorization: str | None, hashed: str | None) -> Access:
    if authorization is None:
        if keys.allow_anonymous:
            return Access(tenant=keys.anonymous_tenant)
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    if hashed is None:
        raise Unauthorized("malformed Authorization header: expected 'Bearer <key>'")
    found = keys.get(hashed)
    if found is None:
        raise Unauthorized("unknown API key")
    return found


def resolve_access(keys: KeyRing, authorization: str | None) -> Access:
    """What an ``Authorization`` header value grants; `Unauthorized` when there is no key or an
    unknown one."""
    key = _bearer(authorization)
    return _granted(keys, authorization, hash_api_key(key) if key else None)


class KeyGate:
    """Pure ASGI middleware: a request under ``/v1`` without a valid key gets its 401 here,
    before any of its body is read or parsed."""

    def __init__(self, app: Any, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (
            path == PROTECTED_PREFIX or path.startswith(PROTECTED_PREFIX + "/")
        ):
            refused = caller(self.keys, scope).refused
            if refused is not None:
                await problem(401, refused.title, refused.detail)(scope, receive, send)
                return
        await self.app(scope, receive, send)
