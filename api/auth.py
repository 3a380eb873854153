"""API keys: ``Authorization: Bearer <key>``; settings keep only sha256 hashes, each mapped to
its tenant."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Header

from graphmem.config import Settings, hash_api_key
from graphmem.errors import Unauthorized


def tenant_dependency(settings: Settings) -> Callable[[str | None], str]:
    def tenant(authorization: str | None = Header(default=None)) -> str:
        if authorization is None:
            if settings.allow_anonymous:
                return settings.anonymous_tenant
            raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
        scheme, _, key = authorization.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise Unauthorized("malformed Authorization header: expected 'Bearer <key>'")
        found = settings.api_keys.get(hash_api_key(key.strip()))
        if found is None:
            raise Unauthorized("unknown API key")
        return found

    return tenant
