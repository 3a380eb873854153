"""Fact chains in Neo4j, bound to one tenant: the Linker's plan, executed under the chain's lock."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import Conflict, InvalidInput, in_use
from graphmem.facts.linker import ChainFact, NewFact, Plan, plan
from graphmem.facts.restore import RestoredFact
from graphmem.store.connection import native
from graphmem.store.scope import scope_token
from graphmem.store.tenant import TenantBound, ranked_search
from graphmem.store.times import epoch_times

if TYPE_CHECKING:
    from graphmem.store.connection import Row

HISTORY_REASON = "placed into history: a later value was already recorded"


@dataclass
class FactItem:
    """One fact to write, as the service prepared it (embedding included)."""

    where: str
    """Where it came from in the request, for error messages (e.g. ``observations[2]``)."""
    kind: str
    owner: str
    subject: str
    type: str
    id: str
    content: str | None
    content_norm: str | None
    valid_from: datetime
    valid_to: datetime | None
    cardinality: str
    declared: bool
    sources: list[str]
    reason: str | None
    props: dict[str, Any] = field(default_factory=dict)
    id_given: bool = False
    """The caller named the id (else it derives from the fact: `facts.service.fact_id`)."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.owner, self.subject, self.type)


def _q(tx: ManagedTransaction, name: str, **params: Any) -> list[Row]:
    return [native(r.data()) for r in tx.run(cypher.load(f"queries/facts/{name}"), params)]


class FactStore(TenantBound):
    def missing_sources(self, ids: list[str], owners: frozenset[str] | None = None) -> list[str]:
        """Which of ``ids`` name no message, fact or episode (of ``owners``, if given)."""
        if not ids:
            return []
        rows = self._run("queries/facts/missing_sources", ids=ids,
                         owners=None if owners is None else sorted(owners))
        missing: list[str] = rows[0]["missing"] if rows else []
        return missing

    def write(self, items: list[FactItem], now: datetime, batch: str) -> list[Row]:
        """Write a batch of facts in ONE transaction; returns what each item did."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> list[Row]:
            cards = _cardinalities(tx, tenant, items, now)
            keys = sorted({i.key for i in items})
            _q(tx, "lock_keys", tenant=tenant, now=now, keys=[
                {"kind": k, "owner": o, "subject": s, "type": t} for k, o, s, t in keys])
            return [_write_one(tx, tenant, item, cards[(item.kind, item.type)] == "multi", now,
                               batch) for item in items]

        result: list[Row] = self._store.write_tx(work)
        return result

    def check_types(self, facts: list[RestoredFact]) -> None:
        """Conflict when a fact type of ``facts`` is stored with the other cardinality (read
        before anything is restored)."""
        asked: dict[tuple[str, str], str] = {
            (f.kind, str(f.props["type"])): str(f.props.get("cardinality", "single"))
            for f in facts}
        for kind in sorted({k for k, _ in asked}):
            names = sorted(t for k, t in asked if k == kind)
            for r in self._run("queries/facts/known_types", kind=kind, names=names):
                if r["cardinality"] != asked[(kind, r["name"])]:
                    raise Conflict(
                        f"fact type {r['name']!r} is {r['cardinality']}-valued here, "
                        f"{asked[(kind, r['name'])]}-valued in the export; nothing was restored")

    def restore(self, facts: list[RestoredFact], embeddings: dict[str, list[float]],
                now: datetime) -> tuple[list[str], list[str]]:
        """Store fact versions again as they were recorded (`graphmem.facts.restore`; a batch
        holding whole chains), in ONE transaction, under their chains' locks: a version whose
        id is stored already is left as it is (with its links); the others are created, linked
        to their sources and the versions they revised where those are stored (a fact source
        of a later batch: `restore_fact_sources` once all are). Returns (created, existing)."""
        tenant = self.tenant

        def work(tx: ManagedTransaction) -> tuple[list[str], list[str]]:
            _q(tx, "fact_types", tenant=tenant, now=now, types=[
                {"kind": k, "name": t, "cardinality": c} for (k, t), c in sorted(
                    {(f.kind, f.props["type"]): f.props.get("cardinality", "single")
                     for f in facts}.items())])
            _q(tx, "lock_keys", tenant=tenant, now=now, keys=[
                {"kind": k, "owner": o, "subject": s, "type": t}
                for k, o, s, t in sorted({f.key for f in facts})])
            created: list[str] = []
            existing: list[str] = []
            for f in facts:
                props = {**f.props, "embedding": embeddings.get(f.id)}
                made = _q(tx, "create", tenant=tenant, id=f.id, kind=f.kind, props=props,
                          scope=scope_token(tenant, str(f.props["owner"])))
                (created if made else existing).append(f.id)
            new = set(created)
            self._links(tx, [f for f in facts if f.id in new])
            return created, existing

        result: tuple[list[str], list[str]] = self._store.write_tx(work)
        return result

    def restore_fact_sources(self, facts: list[RestoredFact]) -> None:
        """The links of restored facts to the facts they rest on, once every fact of the
        restore is stored (a source of another chain may have come in a later transaction;
        their messages and the versions they revised were there in their own)."""
        self._store.write_tx(lambda tx: self._links(tx, facts, fact_sources_only=True))

    def _links(self, tx: ManagedTransaction, facts: list[RestoredFact],
               fact_sources_only: bool = False) -> None:
        _q(tx, "restore_links", tenant=self.tenant,
           sources=[{"from": f.id, "to": s["id"], "props": s["props"]} for f in facts
                    for s in (f.fact_sources if fact_sources_only else f.sources)],
           supersedes=[] if fact_sources_only else [
               {"from": f.id, "to": s["id"], "props": s["props"]}
               for f in facts for s in f.supersedes])

    def search(
        self, index: str, owner: str, k: int, overfetch: int, t: datetime, **params: Any
    ) -> list[tuple[str, float]]:
        """Ranked observations valid at ``t``; ``index`` is ``vector`` or ``fulltext``."""
        return ranked_search(
            self._run,
            f"queries/facts/{index}_search", k, overfetch, {"owner": owner, "t": t, **params},
        )[0]

    def get(self, ids: list[str]) -> list[Row]:
        found = self._run("queries/facts/get", ids=ids)[0]["facts"]
        return [{**r, "f": epoch_times(r["f"])} for r in found]

    def query(self, **params: Any) -> list[Row]:
        return self._run("queries/facts/query", **params)

    def history(self, id_: str) -> Row | None:
        rows = self._run("queries/facts/history", id=id_)
        return rows[0] if rows and rows[0]["facts"] else None


def _cardinalities(
    tx: ManagedTransaction, tenant: str, items: list[FactItem], now: datetime
) -> dict[tuple[str, str], str]:
    """Fix each type's cardinality at first use; a request declaring the other one is refused."""
    asked: dict[tuple[str, str], FactItem] = {}
    for item in items:
        first = asked.setdefault((item.kind, item.type), item)
        if item.declared and first.declared and first.cardinality != item.cardinality:
            raise InvalidInput(f"{item.where}.cardinality",
                               f"type {item.type!r} declared both single and multi in one request")
        if item.declared and not first.declared:
            asked[(item.kind, item.type)] = item
    rows = _q(tx, "fact_types", tenant=tenant, now=now, types=[
        {"kind": k, "name": t, "cardinality": i.cardinality} for (k, t), i in asked.items()])
    stored = {(r["kind"], r["name"]): r["cardinality"] for r in rows}
    for key, item in asked.items():
        if item.declared and stored[key] != item.cardinality:
            raise InvalidInput(
                f"{item.where}.cardinality",
                f"type {item.type!r} is {stored[key]}-valued (fixed at its first use); "
                f"it cannot be used as {item.cardinality}-valued",
            )
    return stored


def _write_one(
    tx: ManagedTransaction, tenant: str, item: FactItem, multi: bool, now: datetime, batch: str
) -> Row:
    chain = [ChainFact(r["id"], r["content"], r["valid_from"], r["valid_to"]) for r in _q(
        tx, "chain", tenant=tenant, kind=item.kind, owner=item.owner, subject=item.subject,
        type=item.type)]
    p: Plan = plan(chain, NewFact(item.content_norm, item.valid_from, item.valid_to), multi)
    if p.action != "created":
        if p.target is not None and item.sources:
            _q(tx, "support", tenant=tenant, id=p.target, sources=item.sources, now=now,
               batch=batch)
        return {"id": p.target or item.id, "action": p.action, "superseded": [],
                "superseded_by": None}
    props = {
        **item.props, "owner": item.owner, "subject": item.subject, "type": item.type,
        "content": item.content, "content_norm": item.content_norm,
        "valid_from": item.valid_from, "valid_to": p.valid_to, "valid_to_original": p.valid_to,
        "recorded_at": now, "invalidated_at": now if p.closed_by else None,
        "cardinality": "multi" if multi else "single", "batch": batch,
    }
    id_ = _create(tx, tenant, item, props)
    if item.sources:
        _q(tx, "support", tenant=tenant, id=id_, sources=item.sources, now=now, batch=batch)
    source = item.sources[0] if item.sources else None
    for close in p.closes:
        _q(tx, "supersede", tenant=tenant, by=id_, of=close.id, valid_to=close.valid_to,
           previous=close.previous, now=now, reason=item.reason or "replaced by a newer value",
           source=source)
    if p.closed_by:
        _q(tx, "supersede", tenant=tenant, by=p.closed_by, of=id_, valid_to=p.valid_to,
           previous=item.valid_to, now=now, reason=HISTORY_REASON, source=source)
    return {"id": id_, "action": "created", "superseded": [c.id for c in p.closes],
            "superseded_by": p.closed_by}


REASSERTIONS = 100
"""How often one value from one start may be believed again after being replaced."""


def _create(tx: ManagedTransaction, tenant: str, item: FactItem, props: dict[str, Any]) -> str:
    """Create the fact node; returns its id. A derived id that exists already belongs to the same
    value from the same start, believed before and since replaced (B, then A from the same day,
    then B again): believing it again is a new fact, and history keeps the old one, so it takes
    the first free id of ``<id>-2``, ``<id>-3``, ... (the same on a retry of the request). A
    named id that exists is a conflict."""
    tries = [item.id] if item.id_given else [
        item.id, *(f"{item.id}-{n}" for n in range(2, REASSERTIONS + 2))]
    for id_ in tries:
        if _q(tx, "create", tenant=tenant, id=id_, kind=item.kind, props=props,
              scope=scope_token(tenant, item.owner)):
            return id_
    raise Conflict(in_use(item.where, [item.id]),
                   field=f"{item.where}.id")
