"""The Linker's decisions, as a pure function of the stored chain and the new fact.

A chain is every stored fact of one (owner, subject, type). For a single-valued type the non-empty
validity intervals of a chain never overlap. A new fact:

- with the content of the fact valid at its ``valid_from``: no new node, the fact gains support;
- with other content: a new node. The fact valid at its ``valid_from`` (if any) is closed there and
  is SUPERSEDED by the new node. If a later fact is already known, the new node is placed into
  history: its ``valid_to`` becomes that fact's ``valid_from`` and that fact SUPERSEDES it.
- for a multi-valued type, values accumulate: an equal value valid at that time gains support, and
  an equal value known to start later closes the new one (so one value never overlaps itself).

A tombstone (``content`` None: a profile DELETE) closes the fact valid at its time, like any value,
and is itself never returned as current.

The store runs this under a lock on the chain's key, inside the write transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal


def normalise(content: str | None) -> str | None:
    """Equality of contents ignores case and runs of whitespace."""
    return None if content is None else " ".join(content.split()).casefold()


@dataclass(frozen=True)
class ChainFact:
    id: str
    content: str | None
    """Normalised content; None for a tombstone."""
    valid_from: datetime
    valid_to: datetime | None

    def valid_at(self, t: datetime) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    @property
    def empty(self) -> bool:
        return self.valid_to is not None and self.valid_to <= self.valid_from


@dataclass(frozen=True)
class NewFact:
    content: str | None
    valid_from: datetime
    valid_to: datetime | None


@dataclass(frozen=True)
class Close:
    """Set ``id``'s valid_to to ``valid_to`` (it was ``previous``)."""

    id: str
    valid_to: datetime
    previous: datetime | None


@dataclass(frozen=True)
class Plan:
    action: Literal["created", "supported", "noop"]
    target: str | None = None
    """The fact that gains support (action 'supported')."""
    valid_to: datetime | None = None
    """valid_to of the new node (action 'created')."""
    closes: list[Close] = field(default_factory=list)
    """Facts the new node closes and SUPERSEDES."""
    closed_by: str | None = None
    """A later fact that SUPERSEDES the new node (placed into history)."""


def plan(chain: list[ChainFact], new: NewFact, multi: bool = False) -> Plan:
    live = [f for f in chain if not f.empty]
    if multi:
        return _plan_multi(live, new)
    covering = max((f for f in live if f.valid_at(new.valid_from)), default=None,
                   key=lambda f: f.valid_from)
    if covering is not None and covering.content == new.content:
        return Plan("supported" if new.content is not None else "noop", target=covering.id)
    if new.content is None and (covering is None or covering.content is None):
        return Plan("noop")  # nothing to delete at that time
    successor = min((f for f in live if f.valid_from > new.valid_from), default=None,
                    key=lambda f: f.valid_from)
    valid_to = new.valid_to
    closed_by = None
    if successor is not None and (valid_to is None or successor.valid_from < valid_to):
        valid_to, closed_by = successor.valid_from, successor.id
    closes = []
    if covering is not None:
        closes.append(Close(covering.id, new.valid_from, covering.valid_to))
    return Plan("created", valid_to=valid_to, closes=closes, closed_by=closed_by)


def _plan_multi(live: list[ChainFact], new: NewFact) -> Plan:
    """Values accumulate; one value's intervals still never overlap: an equal value known to
    start later closes the new one (placed into history), as in a single-valued chain."""
    same = [f for f in live if f.content == new.content]
    covering = [f for f in same if f.valid_at(new.valid_from)]
    if covering:
        return Plan("supported", target=covering[0].id)
    if new.content is None:
        return Plan("noop")
    later = min((f for f in same if f.valid_from > new.valid_from), default=None,
                key=lambda f: f.valid_from)
    if later is not None and (new.valid_to is None or later.valid_from < new.valid_to):
        return Plan("created", valid_to=later.valid_from, closed_by=later.id)
    return Plan("created", valid_to=new.valid_to)
