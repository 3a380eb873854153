"""Facts stored again from an owner's export, as they were recorded: every version with its
valid and recorded times, its sources and its revisions. A restore copies a history; it records
nothing new, so the Linker does not run (observing the versions again would record each as
learnt now, and revise them again). Pure: export records in, rows for `FactStore.restore` out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graphmem.facts.linker import normalise

if TYPE_CHECKING:
    from graphmem.lifecycle.export import ExportRecord

FACT_TIMES = ("valid_from", "valid_to", "valid_to_original", "recorded_at", "invalidated_at")
LINK_TIMES = ("at", "closed_valid_to", "previous_valid_to")
RESTORE_BATCH = 500
"""Fact versions restored in one transaction (a longer chain goes whole)."""
SOURCE_KINDS = ("message", "fact")
"""Sources a restored fact is linked to again. Episodes are formed again from the messages, and
extraction links its facts to them when it runs again."""


@dataclass(frozen=True)
class RestoredFact:
    """One fact version to store again."""

    id: str
    kind: str
    props: dict[str, Any]
    """Its stored properties (times as datetimes), ``content_norm`` and ``search_text``."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    """{id, kind, props} of the messages and facts it is SUPPORTED_BY."""
    supersedes: list[dict[str, Any]] = field(default_factory=list)
    """{id, props} of the versions it SUPERSEDES (reason, source, times)."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Its chain: (kind, owner, subject, type)."""
        return (self.kind, str(self.props["owner"]), str(self.props["subject"]),
                str(self.props["type"]))

    @property
    def fact_sources(self) -> list[dict[str, Any]]:
        """Its sources that are facts (maybe of a chain restored in a later transaction)."""
        return [s for s in self.sources if s["kind"] == "fact"]

    @property
    def search_text(self) -> str | None:
        text = self.props.get("search_text")
        return text if isinstance(text, str) else None


def _times(props: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``props`` with the ISO 8601 texts under ``keys`` as aware datetimes."""
    out = dict(props)
    for key in keys:
        if isinstance(out.get(key), str):
            out[key] = datetime.fromisoformat(out[key])
    return out


def facts_of(records: Iterable[ExportRecord]) -> list[RestoredFact]:
    """The fact records of an export (every version) as rows to store again."""
    out = []
    for r in records:
        if r.kind != "fact":
            continue
        props = _times({k: v for k, v in r.properties.items() if k not in ("id", "kind")},
                       FACT_TIMES)
        content = props.get("content")
        props["content_norm"] = normalise(content)
        props["search_text"] = (f"{props['subject']} {props['type']}: {content}"
                                if content is not None else None)
        out.append(RestoredFact(
            id=r.id, kind=str(r.properties.get("kind", "observation")), props=props,
            sources=[{"id": x.id, "kind": x.kind, "props": _times(x.properties, LINK_TIMES)}
                     for x in r.links if x.type == "SUPPORTED_BY" and x.kind in SOURCE_KINDS],
            supersedes=[{"id": x.id, "props": _times(x.properties, LINK_TIMES)}
                        for x in r.links if x.type == "SUPERSEDES"]))
    return out


def restore_batches(facts: list[RestoredFact], size: int) -> list[list[RestoredFact]]:
    """``facts`` in batches of whole chains (a fact's versions revise each other within its
    chain), about ``size`` versions each (a chain longer than that alone)."""
    chains: dict[tuple[str, str, str, str], list[RestoredFact]] = {}
    for f in facts:
        chains.setdefault(f.key, []).append(f)
    batches: list[list[RestoredFact]] = [[]]
    for chain in chains.values():
        if batches[-1] and len(batches[-1]) + len(chain) > size:
            batches.append([])
        batches[-1].extend(chain)
    return [b for b in batches if b]
