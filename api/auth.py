"""API keys: ``Authorization: Bearer <key>``; the server keeps only sha256 hashes, each mapped
to what it grants (`graphmem.access.Access`: a tenant, maybe some of its owners only, maybe
read only). `KeyRing` holds them: ``GRAPHMEM_API_KEYS`` (read at start) and the keys file
``GRAPHMEM_API_KEYS_FILE``, read again when it changes (checked at most once a second), so keys
are added and revoked without a restart. `KeyGate` refuses a request to ``/v1`` without a valid
key before its body is read; `access_dependency` gives the routes the caller's access."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import Header

from graphmem.access import Access, Grant, parse_keys
from graphmem.config import Settings, hash_api_key
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
        self._fixed = dict(settings.api_keys)
        self._path = settings.api_keys_file
        self._clock = clock
        self._lock = threading.Lock()
        self._from_file: dict[str, Grant] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._checked = clock()
        if self._path is not None:
            self._stamp = self._stat()
            self._from_file = read_keys_file(self._path)

    def get(self, hashed: str) -> Access | None:
        """What the key with this sha256 hex grants; None for an unknown key."""
        if self._path is not None and self._clock() - self._checked >= RECHECK_S:
            self._reload()
        grant = self._from_file.get(hashed) or self._fixed.get(hashed)
        return None if grant is None else Access.of(grant)

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
            self._from_file = keys
            log.info("API keys file %s read again: %d key(s)", self._path, len(keys))


def resolve_access(keys: KeyRing, authorization: str | None) -> Access:
    """What an ``Authorization`` header value grants; `Unauthorized` when there is no key or an
    unknown one."""
    if authorization is None:
        if keys.allow_anonymous:
            return Access(tenant=keys.anonymous_tenant)
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("malformed Authorization header: expected 'Bearer <key>'")
    found = keys.get(hash_api_key(key.strip()))
    if found is None:
        raise Unauthorized("unknown API key")
    return found


def resolve_tenant(keys: KeyRing, authorization: str | None) -> str:
    """The tenant of an ``Authorization`` header value (`resolve_access`)."""
    return resolve_access(keys, authorization).tenant


def access_dependency(keys: KeyRing) -> Callable[[str | None], Awaitable[Access]]:
    """The route dependency giving the caller's access. It is a coroutine function (at most a
    stat of the keys file a second), so FastAPI calls it on the event loop instead of handing
    it to a thread."""
    async def access(authorization: str | None = Header(default=None)) -> Access:
        return resolve_access(keys, authorization)

    return access


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
            values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
            header = values[0].decode("latin-1") if values else None
            try:
                if len(values) > 1:
                    raise Unauthorized("send one Authorization header, not several")
                resolve_access(self.keys, header)
            except Unauthorized as exc:
                await problem(401, exc.title, exc.detail)(scope, receive, send)
                return
        await self.app(scope, receive, send)
