"""The export of an owner: everything graphmem stores about one owner, as records a program can
read back (data portability, a copy before forgetting, moving between databases). This module
owns the wire models of the export, the order of its kinds, its cursor, and the turning of a
stored node into a record (`record`), and the walk of one page through the kinds (`page`, given
a reader); pure, no I/O. The reads are `graphmem.store.export`; the way back, an export stored
again, is `graphmem.lifecycle.restore` (messages and runs) and `graphmem.facts.restore` (facts).

A record is one stored node of the owner: its ``kind``, its ``id`` (an entity's is its name),
its stored ``properties`` and its ``links`` to other records (relationship type, direction,
the other record's kind and id, the relationship's properties). Each relationship is listed once,
on the record with few of that type (a message lists the entities it mentions, a case the skill
versions it supports), so every record stays small. Left out, as what only serves the indexes
and the Browser: the tenant, embeddings, index helper texts and tokens, captions. Properties
stored as JSON text (``metadata_json``) come decoded under their name without ``_json``
(``metadata``); times are ISO 8601 in UTC. Sentence units, turn windows, sessions and the
bookkeeping of jobs are made again from the messages, and are not exported; nor are a
document's chunks, made again from its version's text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, JsonValue

from graphmem.errors import InvalidInput

ExportKind = Literal["message", "entity", "episode", "fact", "trace", "step", "case", "cluster",
                     "skill", "document", "section", "topic"]
KINDS: tuple[ExportKind, ...] = get_args(ExportKind)
"""The order of an export: raw turns first, then what was made of them, then agent runs and
what was learned from them, then documents (every version, its text included), their sections
and the owner's topics. Within a kind, records come in id order (entities: name order). New
kinds come last, so a cursor of an older export still reads."""

LEFT_OUT = frozenset({"tenant", "caption", "embedding", "scope", "search_text", "content_norm",
                      "metadata_pairs", "metadata_tokens"})
"""Stored properties that only serve the indexes (the tenant is the caller's own) and Neo4j
Browser's captions."""

MAX_LIMIT = 1000
DEFAULT_LIMIT = 500


class ExportLink(BaseModel):
    """A relationship between two records of the export."""

    type: str = Field(description="The relationship type, e.g. SUPPORTED_BY")
    direction: Literal["out", "in"] = Field(
        description="out: from this record to the other; in: from the other to this one")
    kind: ExportKind = Field(description="The other record's kind")
    id: str = Field(description="The other record's id")
    properties: dict[str, Any] = Field(default_factory=dict)


class ExportRecord(BaseModel):
    """One stored node of an owner."""

    kind: ExportKind
    id: str = Field(description="The node's id (an entity's name)")
    properties: dict[str, Any] = Field(
        description="Every stored property but index helpers; JSON text decoded (metadata_json "
        "as metadata), times as ISO 8601 in UTC")
    links: list[ExportLink] = Field(default_factory=list)


class OwnerExport(BaseModel):
    """A page of an owner's export: records in export order (kinds in a fixed order, ids in
    order within a kind); ``next`` is the cursor of the next page, null after the last."""

    owner: str
    exported_at: datetime = Field(description="When this page was read (recorded time)")
    records: list[ExportRecord]
    next: str | None = Field(description="Send as `after` for the next page; null: done")


# --- the cursor -------------------------------------------------------------------------------

def cursor(kind: ExportKind, id_: str) -> str:
    """The cursor after record (kind, id): ``kind:id`` (an id may hold ``:``; a kind cannot)."""
    return f"{kind}:{id_}"


def parse_cursor(after: str) -> tuple[int, str]:
    """(index of the kind in `KINDS`, the last id read of it) for ``after``; (0, "") for "".
    A cursor naming no kind of the export is an InvalidInput naming ``after``."""
    if not after:
        return 0, ""
    kind, sep, id_ = after.partition(":")
    if not sep or kind not in KINDS:
        raise InvalidInput("after", "not a cursor of this export: send the `next` of the "
                           "previous page (kind:id), or nothing for the first page")
    return KINDS.index(kind), id_


# --- a stored node as a record ----------------------------------------------------------------

def _value(value: Any) -> JsonValue:
    """A stored value as JSON: date-times as ISO 8601 in UTC, dates, times and durations (Neo4j
    or Python) as ISO 8601, lists element-wise; anything else stored (a point) as its text."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if hasattr(value, "iso_format"):  # neo4j.time.Date, Time, Duration
        return str(value.iso_format())
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in value.items()}
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _decoded(text: Any) -> JsonValue:
    """JSON text as its value; text that is not JSON stays text (never a failed export)."""
    if not isinstance(text, str):
        return _value(text)
    try:
        return json.loads(text)  # type: ignore[no-any-return]
    except ValueError:
        return text


def properties(stored: dict[str, Any]) -> dict[str, JsonValue]:
    """A node's or relationship's stored properties as the export gives them, keys in order."""
    out: dict[str, JsonValue] = {}
    for key in sorted(stored):
        if key in LEFT_OUT:
            continue
        if key.endswith("_json"):
            out[key[:-5]] = _decoded(stored[key])
        else:
            out[key] = _value(stored[key])
    return out


def record(kind: ExportKind, row: dict[str, Any]) -> ExportRecord:
    """A row of a `queries/export/<kind>` read (id, properties, links) as a record."""
    links = [ExportLink(type=link["type"], direction=link["direction"], kind=link["kind"],
                        id=link["id"], properties=properties(link["properties"] or {}))
             for link in row["links"]]
    links.sort(key=lambda link: (link.type, link.direction, link.kind, link.id))
    return ExportRecord(kind=kind, id=row["id"], properties=properties(row["properties"]),
                        links=links)


Reader = Callable[[ExportKind, str, int], list[dict[str, Any]]]
"""(kind, after id, limit) -> at most limit rows {id, properties, links} of that kind, in order."""


def page(read: Reader, owner: str, after: str, limit: int, now: datetime) -> OwnerExport:
    """The page of ``owner``'s export after cursor ``after``: up to ``limit`` records, read
    kind after kind (one read per kind at most, each for what the page still has room for).
    ``next`` is the cursor of its last record when the page is full, else null."""
    start, after_id = parse_cursor(after)
    records: list[ExportRecord] = []
    for kind in KINDS[start:]:
        room = limit - len(records)
        rows = read(kind, after_id if kind == KINDS[start] else "", room)
        records += [record(kind, row) for row in rows]
        if len(records) >= limit:
            last = records[-1]
            return OwnerExport(owner=owner, exported_at=now, records=records,
                               next=cursor(last.kind, last.id))
    return OwnerExport(owner=owner, exported_at=now, records=records, next=None)
