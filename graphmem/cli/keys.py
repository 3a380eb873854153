"""`graphmem key` and `graphmem revoke-key`: API keys. A key is printed once; the server keeps
only its sha256 hash, mapped to what it grants (a tenant, maybe some owners, maybe read only).
Without a keys file the command prints the ``GRAPHMEM_API_KEYS`` line to set (restart the
server to take it); with one (``--file``, or ``GRAPHMEM_API_KEYS_FILE``) it writes the file,
which the server reads again within a second."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from graphmem.access import parse_keys
from graphmem.cli.common import Owners, ReadOnly, access_of, check_tenant, console, fail
from graphmem.config import KEY_ID_CHARS, hash_api_key, key_id

KeysFile = Annotated[Path | None, typer.Option(
    "--file", envvar="GRAPHMEM_API_KEYS_FILE", dir_okay=False,
    help="The server's keys file: write the key there (taken within a second, no restart)")]


def _as_written(raw: str, where: str, hint: str = "") -> dict[str, Any]:
    """Keys as written in ``raw`` (hashes to grants), once they parse (`parse_keys`)."""
    try:
        parse_keys(raw)
    except ValueError as exc:
        raise fail(ValueError(f"{where}: {exc}{hint}")) from None
    keys: dict[str, Any] = json.loads(raw)
    return keys


def _env_keys() -> dict[str, Any]:
    """The keys already in GRAPHMEM_API_KEYS, so a new key adds to them."""
    raw = os.environ.get("GRAPHMEM_API_KEYS", "").strip()
    return _as_written(raw, "GRAPHMEM_API_KEYS") if raw else {}


def _file_keys(path: Path) -> dict[str, Any]:
    """The keys of ``path`` ({} when it does not exist yet); a file that is not a valid keys
    file is refused, never overwritten."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(ValueError(f"{path}: cannot be read ({exc})")) from None
    return _as_written(raw, str(path), "; fix it first (nothing written)")


def _write_keys(path: Path, keys: dict[str, Any]) -> None:
    """Replace ``path`` at once (a server reading it sees the old file or the new one, never a
    part), readable by its owner only."""
    fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(keys, out, indent=1, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def new_key(
    tenant: Annotated[str, typer.Argument(callback=check_tenant)],
    owner: Owners = None,
    read_only: ReadOnly = False,
    rate_limit: Annotated[float | None, typer.Option(
        "--rate-limit", min=0.0, help="Requests per second for this key (0: no limit); "
        "default the server's GRAPHMEM_RATE_LIMIT")] = None,
    file: KeysFile = None,
) -> None:
    """Make an API key for TENANT. Prints the key (give it to the client). With a keys file,
    adds it there (the server takes it within a second); else prints, on stdout, the line that
    sets GRAPHMEM_API_KEYS on the server: the keys already in the environment plus this one
    (only hashes are kept; restart the server to take it)."""
    access = access_of(tenant, owner, read_only, rate_limit)
    key = "gm_" + secrets.token_urlsafe(24)
    grant: str | dict[str, Any] = tenant
    if not access.everything:
        fields = {"tenant": tenant, "owners": sorted(access.owners) if access.owners else None,
                  "read_only": True if read_only else None, "rate_limit": rate_limit}
        grant = {k: v for k, v in fields.items() if v is not None}
    limits = ([f"owners {', '.join(sorted(owner))}"] if owner else []) + (
        ["read-only"] if read_only else []) + (
        [f"{rate_limit:g} requests/s"] if rate_limit is not None else [])
    console.print(f"key for tenant {tenant!r}" + (f" ({'; '.join(limits)})" if limits else "")
                  + f": {key}", highlight=False)
    console.print(f"its id (in the request log; enough to revoke it): {key_id(key)}",
                  highlight=False)
    if file is not None:
        keys = {**_file_keys(file), hash_api_key(key): grant}
        _write_keys(file, keys)
        console.print(f"added to {file} ({len(keys)} key(s)); a server reading it takes the key "
                      "within a second", highlight=False)
        return
    keys = {**_env_keys(), hash_api_key(key): grant}
    typer.echo(f"export GRAPHMEM_API_KEYS={shlex.quote(json.dumps(keys))}")
    console.print(f"{len(keys)} key(s) in that line; restart the server (graphmem serve) for "
                  "it to take them", highlight=False)


def revoke_key(
    key: Annotated[str, typer.Argument(
        help="The key, its id (12 hex characters, as `graphmem key` and the request log "
        "show it) or its sha256 hex")],
    file: KeysFile = None,
) -> None:
    """Remove a key from the keys file: the server refuses it within a second. (A key set in
    GRAPHMEM_API_KEYS goes by removing it there and restarting the server.)"""
    if file is None:
        raise typer.BadParameter("revoking needs the keys file (or GRAPHMEM_API_KEYS_FILE)",
                                 param_hint="--file")
    keys = _file_keys(file)
    named = [h for h in keys if h == key or (len(key) == KEY_ID_CHARS and h.startswith(key))]
    hashed = named[0] if len(named) == 1 else hash_api_key(key)
    if hashed not in keys:
        raise fail(ValueError(f"no such key in {file} (nothing changed)"))
    del keys[hashed]
    _write_keys(file, keys)
    console.print(f"revoked: removed from {file} ({len(keys)} key(s) left)", highlight=False)
