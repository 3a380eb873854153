"""Writing and reading facts: observations (any subject) and the profile (one owner's keys)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from graphmem.config import Settings
from graphmem.embeddings import Embedder
from graphmem.errors import InvalidInput, NotFound
from graphmem.facts.linker import normalise
from graphmem.facts.models import Fact, FactHistory, FactWrite, ObservationIn, ProfileOp
from graphmem.facts.restore import RESTORE_BATCH, RestoredFact, facts_of, restore_batches
from graphmem.store import TenantStores
from graphmem.store.facts import FactItem

if TYPE_CHECKING:
    from graphmem.lifecycle.export import ExportRecord

Kind = Literal["observation", "profile"]


def fact_id(kind: str, owner: str, subject: str, type_: str, content: str | None,
            valid_from: datetime) -> str:
    """Deterministic id: the same fact sent twice (a retry) is the same node."""
    key = "\x1f".join([kind, owner, subject, type_, content or "\x00deleted",
                       valid_from.isoformat()])
    return ("o-" if kind == "observation" else "p-") + hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class _Sources:
    missing: set[str]
    timestamps: dict[str, datetime]


class Facts:
    """Facts of one tenant at a time: every method works over that tenant's stores."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        self._settings = settings
        self._embedder = embedder

    # --- writing ------------------------------------------------------------------------------
    def observe(self, stores: TenantStores, observations: Sequence[ObservationIn],
                visible: frozenset[str] | None = None, by: str | None = None) -> list[FactWrite]:
        """Write observations through the Linker, one transaction; ``visible``: the owners whose
        messages and facts may be cited as sources (None: every owner's); ``by``: who records
        them (kept on each new version as ``recorded_by``)."""
        now = datetime.now(UTC)
        known = self._sources(stores, [o.sources for o in observations], visible)
        items = []
        for i, o in enumerate(observations):
            where = f"observations[{i}]"
            if not o.explicit and not o.sources and self._settings.require_sources_for_inferred:
                raise InvalidInput(f"{where}.sources",
                                   "an inferred observation (explicit=false) needs a source")
            declared = o.cardinality is not None
            cardinality = o.cardinality or self._settings.fact_types.get(
                o.type, self._settings.default_cardinality)
            items.append(self._item(
                where, "observation", o.owner, o.subject, o.type, o.content, o.valid_from,
                o.valid_to, o.sources, known, o.reason, now, cardinality, declared,
                {"explicit": o.explicit, "confidence": o.confidence, "deleted": False,
                 "recorded_by": by},
                given_id=o.id,
            ))
        return self._write(stores, items, now)

    def profile_ops(self, stores: TenantStores, ops: Sequence[ProfileOp],
                    visible: frozenset[str] | None = None,
                    by: str | None = None) -> list[FactWrite]:
        """Apply profile operations; ``visible`` and ``by`` as for `observe`."""
        now = datetime.now(UTC)
        known = self._sources(stores, [op.sources for op in ops], visible)
        items = []
        for i, op in enumerate(ops):
            if op.op == "NOOP":
                continue
            value = None if op.op == "DELETE" else op.value
            items.append(self._item(
                f"ops[{i}]", "profile", op.owner, op.owner, op.key, value, op.valid_from,
                None, op.sources, known, op.reason or f"profile {op.op}", now, "single", False,
                {"explicit": op.explicit, "confidence": None, "deleted": value is None,
                 "recorded_by": by},
            ))
        written = iter(self._write(stores, items, now))
        return [next(written) if op.op != "NOOP" else FactWrite(id="", action="noop")
                for op in ops]

    def _item(
        self, where: str, kind: Kind, owner: str, subject: str, type_: str,
        content: str | None, valid_from: datetime | None, valid_to: datetime | None,
        sources: list[str], known: _Sources, reason: str | None, now: datetime, cardinality: str,
        declared: bool, props: dict[str, Any], given_id: str | None = None,
    ) -> FactItem:
        missing = [s for s in sources if s in known.missing]
        if missing:
            raise InvalidInput(f"{where}.sources", f"unknown source ids: {missing[:10]}")
        stamps = [known.timestamps[s] for s in sources if s in known.timestamps]
        start = valid_from or min(stamps, default=None) or now
        if valid_to is not None and valid_to <= start:
            raise InvalidInput(f"{where}.valid_to",
                               f"valid_to {valid_to.isoformat()} is not after valid_from "
                               f"{start.isoformat()}")
        text = f"{subject} {type_}: {content}" if content is not None else None
        return FactItem(
            where=where, kind=kind, owner=owner, subject=subject, type=type_,
            id=given_id or fact_id(kind, owner, subject, type_, content, start),
            content=content, content_norm=normalise(content), valid_from=start,
            valid_to=valid_to, cardinality=cardinality, declared=declared,
            sources=list(dict.fromkeys(sources)), reason=reason,
            props={**props, "search_text": text}, id_given=given_id is not None,
        )

    def _sources(self, stores: TenantStores, groups: Sequence[Sequence[str]],
                 visible: frozenset[str] | None) -> _Sources:
        """One look-up for a whole request: which source ids are unknown (or of owners not
        ``visible``), and the timestamps of the messages among them (the default valid_from is
        the earliest source message's)."""
        ids = list(dict.fromkeys(s for group in groups for s in group))
        if not ids:
            return _Sources(set(), {})
        rows = stores.messages.get_messages(ids)
        return _Sources(set(stores.facts.missing_sources(ids, visible)),
                        {r["id"]: r["timestamp"] for r in rows})

    def _write(self, stores: TenantStores, items: list[FactItem], now: datetime) -> list[FactWrite]:
        texts = [i.props["search_text"] for i in items if i.props["search_text"] is not None]
        vectors = iter(self._embedder.embed(texts))
        for item in items:
            if item.props["search_text"] is not None:
                item.props["embedding"] = next(vectors)
        rows = stores.facts.write(items, now, uuid.uuid4().hex)
        return [FactWrite(**row) for row in rows]

    def restore(self, stores: TenantStores, records: Sequence[ExportRecord]) -> tuple[int, int]:
        """Store again the fact versions of an export (`graphmem.facts.restore`: times, sources
        and revisions as recorded; the Linker does not run), in transactions of whole chains
        (`RESTORE_BATCH` versions or one chain); a type stored with the other cardinality is a
        Conflict before anything is written. Returns (created, already there)."""
        store = stores.facts
        facts = facts_of(records)
        store.check_types(facts)
        created: list[RestoredFact] = []
        existing = 0
        for batch in restore_batches(facts, RESTORE_BATCH):
            texted = [f for f in batch if f.search_text is not None]
            vectors = self._embedder.embed([f.search_text or "" for f in texted])
            made, there = store.restore(
                batch, {f.id: v for f, v in zip(texted, vectors, strict=True)},
                datetime.now(UTC))
            new = set(made)
            created += [f for f in batch if f.id in new]
            existing += len(there)
        resting = [f for f in created if f.fact_sources]  # on facts maybe of later batches
        for start in range(0, len(resting), RESTORE_BATCH):
            store.restore_fact_sources(resting[start:start + RESTORE_BATCH])
        return len(created), existing

    # --- reading ------------------------------------------------------------------------------
    def query(
        self, stores: TenantStores, kind: Kind, owner: str, subject: str | None = None,
        type_: str | None = None, as_of: datetime | None = None,
        known_at: datetime | None = None, include_history: bool = False,
    ) -> list[Fact]:
        rows = stores.facts.query(
            kind=kind, owner=owner, subject=subject, type=type_, as_of=as_of, known_at=known_at,
            now=datetime.now(UTC), include_history=include_history,
        )
        return [Fact(**r["f"], valid_to=r["valid_to"], sources=r["sources"]) for r in rows]

    def history(self, stores: TenantStores, id_: str) -> FactHistory:
        row = stores.facts.history(id_)
        if row is None:
            raise NotFound(f"no fact {id_!r}")
        return FactHistory.model_validate(row)
