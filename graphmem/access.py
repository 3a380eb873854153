"""What a caller may do in its tenant: `Access`, what an API key grants (and what ``graphmem mcp
--owner ... --read-only`` grants an agent). The tenant facade (`TenantMemory`) checks it on every
call, so the HTTP API, MCP over HTTP or stdio, and the CLI all refuse the same things:

* ``owners``: the owners the key may read and write (``None``: every owner of the tenant). A
  call naming another owner is refused (`Forbidden`, 403, naming the field); a thing read or
  forgotten by id (a message, fact, trace, skill, case) that belongs to another owner is
  answered as if it did not exist (404), so a key learns nothing of owners it may not use;
  ids are names in the tenant, so an id it chooses that another owner holds is refused as one
  its own owner holds with other content (409): it learns the id is taken, not whose, nor
  what is stored under it, and it may not send an id of the forms graphmem derives from
  content (`DERIVED_ID`) for other content, which would confirm what another owner stored;
  lists (the tenant's owners) show its owners only. Calls that span the tenant (jobs, LLM
  usage, the audit queries, retrying extraction) need a key for every owner.
* ``read_only``: searches, context, answers, reads and exports only; every write and every
  forgetting is refused (403).
* ``rate_limit``: requests per second for this key, instead of the server's (`RateGate`).

Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from graphmem.errors import Forbidden, InvalidInput, NotFound

OwnerName = Annotated[str, StringConstraints(min_length=1, max_length=200)]
MAX_TENANT = 200
MAX_KEY_OWNERS = 1000
"""Owners one key may name (a key for more is a key for the tenant)."""


class Access(BaseModel):
    """A tenant, and what may be done in it. A key configured as a bare tenant name grants
    every owner, read and write."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: str = Field(min_length=1, max_length=MAX_TENANT)
    owners: frozenset[OwnerName] | None = Field(
        default=None, min_length=1, max_length=MAX_KEY_OWNERS,
        description="The owners this key may use; absent: every owner of the tenant")
    read_only: bool = Field(default=False, description="Reads and searches only")
    rate_limit: float | None = Field(
        default=None, ge=0.0, allow_inf_nan=False,
        description="Requests per second for this key (0: no limit); absent: the server's "
        "`rate_limit`")

    @classmethod
    def of(cls, grant: str | Access) -> Access:
        """A configured grant: a tenant name (everything) or an `Access`."""
        return cls(tenant=grant) if isinstance(grant, str) else grant

    @property
    def everything(self) -> bool:
        """Every owner, read and write, at the server's rate: what a plain tenant key
        grants."""
        return self.owners is None and not self.read_only and self.rate_limit is None

    def sees(self, owner: str | None) -> bool:
        """Whether this key may use ``owner``'s memory (``None``: a thing without owner, which
        only a key for every owner sees)."""
        return self.owners is None or (owner is not None and owner in self.owners)

    def owner(self, owner: str, field: str = "owner") -> str:
        """``owner``, when this key may use it; `Forbidden` naming ``field`` otherwise."""
        if not self.sees(owner):
            raise Forbidden(f"this key may not use owner {owner!r}", field=field)
        return owner

    def each_owner(self, owners: Iterable[str], field: str) -> None:
        """`owner` for a list: ``field`` is its name, e.g. ``observations`` gives
        ``observations[2].owner``."""
        for i, owner in enumerate(owners):
            self.owner(owner, f"{field}[{i}].owner")

    def one_owner(self, owner: str | None, what: str) -> str | None:
        """The owner a read that may name one is for: ``owner`` when this key may use it; for a
        key limited to one owner and no owner named, that owner; `InvalidInput` naming
        ``owner`` for a key limited to several and none named (``what`` says what is read)."""
        if owner is None and self.owners is not None:
            if len(self.owners) > 1:
                raise InvalidInput("owner", f"this key is limited to some owners: name the "
                                   f"owner of {what}")
            return next(iter(self.owners))
        return owner if owner is None else self.owner(owner)

    def found(self, owner: str | None, kind: str, id_: str) -> None:
        """A thing read or forgotten by id: when it is another owner's, `NotFound` worded as for
        an id never stored (``no message 'x'``)."""
        if not self.sees(owner):
            raise NotFound(f"no {kind} {id_!r}")

    def chosen_id(self, where: str, given: str | None, derived: str | None) -> None:
        """An id sent by a key limited to some owners (``where``: ``messages[3]``): one of the
        forms graphmem derives (`DERIVED_ID`) is accepted only as the one derived from this
        same content (``derived``; None where it cannot be known before storing), since
        another owner's derived id would confirm that owner's content. `InvalidInput` naming
        ``where.id`` otherwise."""
        if (self.owners is not None and given is not None and given != derived
                and DERIVED_ID.fullmatch(given)):
            raise InvalidInput(f"{where}.id", "ids of the forms m-, o-, p- or tr- followed by "
                               "32 hex digits are derived by graphmem from content; send "
                               "another id, or none")

    def write(self, what: str) -> None:
        """`Forbidden` for a read-only key; ``what`` names the write (e.g. "storing messages")."""
        if self.read_only:
            raise Forbidden(f"this key is read-only: {what} needs a key that may write")

    def tenant_wide(self, what: str) -> None:
        """`Forbidden` for a key limited to some owners: ``what`` spans the whole tenant."""
        if self.owners is not None:
            raise Forbidden(f"{what} spans the tenant: it needs a key for every owner, not one "
                            "limited to some")


DERIVED_ID = re.compile(r"(?:m|o|p|tr)-[0-9a-f]{32}(?:-[0-9]+)?")
"""The ids graphmem derives from content for a message (``m-``), an observation (``o-``), a
profile fact (``p-``) or a run (``tr-``) sent without one: a hash of the owner and the content."""


Grant = str | Access
"""What one key grants, as configured: a tenant's name (everything in it) or an `Access`."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


def parse_keys(text: str) -> dict[str, Grant]:
    """API keys as configured (``GRAPHMEM_API_KEYS``, or the keys file): a JSON object from the
    sha256 hex of each key to a tenant's name or ``{"tenant", "owners"?, "read_only"?}``.
    ValueError saying what is wrong, and where (the n-th key), never echoing a hash."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(raw, dict):
        raise ValueError('not a JSON object {"<sha256 of a key>": "tenant", ...}')
    out: dict[str, Grant] = {}
    for n, (hashed, grant) in enumerate(raw.items(), 1):
        if not _SHA256.fullmatch(hashed):
            raise ValueError(f"key {n}: not the sha256 hex of a key (64 characters 0-9a-f; "
                             "`graphmem key` writes them)")
        if isinstance(grant, str) and 0 < len(grant) <= MAX_TENANT:
            out[hashed] = grant
            continue
        if not isinstance(grant, dict):
            raise ValueError(f"key {n}: a tenant's name or an object "
                             '{"tenant", "owners", "read_only"}')
        try:
            out[hashed] = Access.model_validate(grant)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "grant"
            raise ValueError(f"key {n}: {where}: {first['msg']}") from None
    return out
