"""Named audit queries (``cypher/audit/*.cypher``): listed, typed from their headers, and run
read-only for one tenant. The same files run unchanged in Neo4j Browser and cypher-shell."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphmem import cypher
from graphmem.errors import InvalidInput, NotFound
from graphmem.store import Store

_PARAM = re.compile(r"\$(\w+) \((string|datetime|int|bool)\)")


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


def get(name: str) -> AuditQuery:
    try:
        text = cypher.load(f"audit/{name}")
    except FileNotFoundError:
        raise NotFound(f"no audit query {name!r}; see GET /v1/audit") from None
    return AuditQuery(
        name=name, purpose=_header(text, "Purpose"),
        params=dict((n, t) for n, t in _PARAM.findall(_header(text, "Parameters"))),
        columns=_header(text, "Columns"), example=_header(text, "Example"), text=text,
    )


def all_queries() -> list[AuditQuery]:
    return [get(n.split("/", 1)[1]) for n in cypher.names("audit")]


def _coerce(name: str, kind: str, raw: str) -> Any:
    try:
        if kind == "datetime":
            value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            if value.tzinfo is None:
                raise ValueError("needs an offset, e.g. 2026-03-15T12:00:00Z")
            return value
        if kind == "int":
            return int(raw)
        if kind == "bool":
            if raw.lower() not in ("true", "false"):
                raise ValueError("true or false")
            return raw.lower() == "true"
        return raw
    except ValueError as exc:
        raise InvalidInput(name, f"expected a {kind}: {exc}") from None


def run(store: Store, tenant: str, name: str, raw: dict[str, str]) -> list[dict[str, Any]]:
    """Run audit query ``name`` for ``tenant`` (never taken from the caller) in a read
    transaction; every declared parameter is required and typed."""
    query = get(name)
    params: dict[str, Any] = {"tenant": tenant}
    for pname, kind in query.params.items():
        if pname == "tenant":
            continue
        if pname not in raw:
            raise InvalidInput(pname, f"missing; {name} takes {sorted(query.params)}")
        params[pname] = _coerce(pname, kind, raw[pname])
    return store.run(f"audit/{name}", **params)
