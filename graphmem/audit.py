"""Named audit queries (``cypher/audit/*.cypher``): listed, typed from their headers, and run
read-only for one tenant. The same files run unchanged in Neo4j Browser and cypher-shell."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from graphmem import cypher
from graphmem.errors import InvalidInput, NotFound
from graphmem.models import utc_datetime
from graphmem.store import Store

_PARAM = re.compile(r"\$(\w+) \((string|datetime|int|bool)\)")
_INT = re.compile(r"[+-]?\d{1,19}", re.ASCII)
INT_RANGE = (-(2**63), 2**63 - 1)
"""Integer parameters are Neo4j integers: signed 64-bit."""
MAX_STRING = 10_000
"""The longest string parameter accepted (characters)."""


@dataclass(frozen=True)
class AuditQuery:
    name: str
    purpose: str
    params: dict[str, str]
    """Parameter name -> type (string, datetime, int, bool), ``tenant`` included."""
    columns: str
    example: str
    text: str


def _header(text: str, label: str) -> str:
    """The text of a ``// Label: ...`` header entry, with its continuation lines."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        body = line[2:].strip()
        if body.startswith(f"{label}:"):
            out = [body[len(label) + 1 :].strip()]
        elif out and line.startswith("//   "):
            out.append(body)
        elif out:
            break
    return " ".join(out)


def names() -> list[str]:
    """The audit query names, e.g. ``true_at``: the files of ``cypher/audit/``."""
    return [n.split("/", 1)[1] for n in cypher.names("audit")]


def get(name: str) -> AuditQuery:
    """The audit query ``name``; NotFound unless it is one of `names()` (a name from a caller
    never becomes a file path unless it is on that list)."""
    if name not in names():
        raise NotFound(f"no audit query {name[:200]!r}; see GET /v1/audit")
    text = cypher.load(f"audit/{name}")
    return AuditQuery(
        name=name, purpose=_header(text, "Purpose"),
        params=dict((n, t) for n, t in _PARAM.findall(_header(text, "Parameters"))),
        columns=_header(text, "Columns"), example=_header(text, "Example"), text=text,
    )


def all_queries() -> list[AuditQuery]:
    return [get(n) for n in names()]


def declared() -> dict[str, str]:
    """Every parameter some audit query takes (but ``tenant``, always the caller's), with its
    type; ``string`` where two queries type it differently."""
    kinds: dict[str, set[str]] = {}
    for q in all_queries():
        for name, kind in q.params.items():
            if name != "tenant":
                kinds.setdefault(name, set()).add(kind)
    return {n: next(iter(k)) if len(k) == 1 else "string" for n, k in sorted(kinds.items())}


def coerce(name: str, kind: str, raw: str) -> Any:
    """A query-string value as the declared parameter type; InvalidInput naming ``name`` else.
    Datetimes follow the API's one rule (`graphmem.models.utc_datetime`), integers are decimal
    and fit Neo4j's 64 bits, strings are non-empty and at most MAX_STRING characters."""
    try:
        if kind == "datetime":
            return utc_datetime(raw)
        if kind == "int":
            if not _INT.fullmatch(raw) or not INT_RANGE[0] <= int(raw) <= INT_RANGE[1]:
                raise ValueError(f"a decimal integer from {INT_RANGE[0]} to {INT_RANGE[1]}")
            return int(raw)
        if kind == "bool":
            if raw.lower() not in ("true", "false"):
                raise ValueError("true or false")
            return raw.lower() == "true"
        if not 1 <= len(raw) <= MAX_STRING:
            raise ValueError(f"from 1 to {MAX_STRING} characters")
        return raw
    except ValueError as exc:
        raise InvalidInput(name, f"expected a {kind}: {exc}") from None


def run(store: Store, tenant: str, name: str, raw: dict[str, str]) -> list[dict[str, Any]]:
    """Run audit query ``name`` for ``tenant`` (never taken from the caller) in a read
    transaction; every declared parameter is required and typed."""
    query = get(name)
    params: dict[str, Any] = {"tenant": tenant}
    for pname, kind in declared().items():  # documented for every query: valid, or refused
        if pname in raw and pname not in query.params:
            coerce(pname, kind, raw[pname])
    for pname, kind in query.params.items():
        if pname == "tenant":
            continue
        if pname not in raw:
            raise InvalidInput(pname, f"missing; {name} takes {sorted(query.params)}")
        params[pname] = coerce(pname, kind, raw[pname])
    return store.run(f"audit/{name}", **params)
