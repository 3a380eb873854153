"""Forgetting one thing: a message, a session (one conversation), the messages a filter chooses,
a trace (one agent run) or a fact (``Memory.forget_*``).

History is never overwritten, and forgetting is always possible. Forgetting removes the content
for real, and everything that was made from it alone; it rewrites nothing else:

* **A message** goes with its sentence units, the turn windows that cover it and the episode
  it belongs to (an episode's narrative and title quote or paraphrase its messages, so
  keeping it would keep the content). The session's NEXT chain is relinked around it, and a
  ``form_session`` job, committed with the deletion, forms the session's other messages into
  episodes and windows again (re-formation: they were never the forgotten content).
* **A session** goes as each of its messages would, all at once: every message with its
  sentence units, the windows covering them, the episodes derived from them, the entities only
  they mentioned, the facts resting only on them, and the session itself. Nothing is formed
  again (nothing of the session is left). One transaction takes at most
  ``max_forget_session_messages`` messages (10,000): a longer session is refused (413) with
  nothing deleted; its owner, or its messages one by one, can still be forgotten.
* **Messages chosen by a filter** (an owner's messages with some metadata, of a session or a
  time range: `forget_matching`) go as each would go alone, one after the other, in one
  transaction: the chains relinked around them, their episodes and windows, the entities only
  they mentioned, the facts resting only on them; their sessions are formed again from what
  is left. At most ``max_forget_matching_messages`` (1,000) a request: more is refused (413)
  with nothing deleted. A filter that matches nothing removes nothing (not a 404: a filter is
  not an id), and is audited all the same.
* **A fact** goes with its edges. A fact that rests *only* on forgotten things (all its
  ``SUPPORTED_BY`` sources are the forgotten message, its episode, or facts going with it) goes
  too: it was derived from the forgotten content, and marking it "unsupported" would keep that
  content. A fact with another source keeps it and only loses the forgotten one. Facts a
  forgotten fact superseded stay closed, and facts that superseded it stay as they are: a
  forgotten value leaves a gap in its chain, never an old value brought back to life (that
  would claim something the store never believed at the time).
* **A document** goes with every version of its key (a version kept would keep the content),
  their sections and chunks; topics count it no more.
* **A trace** goes with its steps and the cases formed from it; a skill version left without a
  supporting case goes (its steps and wording came from those cases), clusters left empty go,
  and a ``form_skills`` job forms the owner's clusters and skills again from the other cases.

Each forgetting is one transaction, bound to the tenant (another tenant's id is unknown: 404),
and leaves a ``:Deletion`` audit record: kind, SHA-256 of the id, time, who asked (``by``: the
caller's API key id, ``cli``, ``mcp-stdio``), counts; no content.
(A session's "id" is its owner and session id joined by a line feed, ``f"{owner}\n{session}"``:
neither may hold one.)
Forgetting again what was already forgotten answers ``already_forgotten`` (idempotent); an id
never stored is a 404.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from graphmem.errors import NotFound
from graphmem.messages.metadata import condition
from graphmem.models import ForgetKind as Kind
from graphmem.models import ForgetMessages
from graphmem.models import ForgetReport as ForgetReport  # its home before the wire models
from graphmem.store import Filters, Store
from graphmem.store.forget import ForgetStore

if TYPE_CHECKING:
    from graphmem.store.core import Row

def id_hash(id_: str) -> str:
    """What the audit record keeps of an id: its SHA-256 (hex) in UTF-8."""
    return hashlib.sha256(id_.encode("utf-8")).hexdigest()


def session_key(owner: str, session_id: str) -> str:
    """What stands for a session's id in its audit record (hashed): owner, line feed, session."""
    return f"{owner}\n{session_id}"


def forget(store: Store, tenant: str, kind: Literal["message", "trace", "fact", "document"],
           id_: str, by: str | None = None) -> ForgetReport:
    """Forget one message, trace or fact of ``tenant``; NotFound for an id never stored. ``by``:
    who asked, kept in the audit record."""
    forgetter = store.tenant(tenant).sibling(ForgetStore)
    digest, now = id_hash(id_), datetime.now(UTC)
    row = getattr(forgetter, kind)(id_, digest, now, by)
    return _report(forgetter, kind, id_, digest, now, row)


def forget_session(store: Store, tenant: str, owner: str, session_id: str,
                   limit: int, by: str | None = None) -> ForgetReport:
    """Forget every message of ``owner``'s session ``session_id`` and what rests only on them;
    NotFound for a session never stored, `TooLarge` beyond ``limit`` messages."""
    forgetter = store.tenant(tenant).sibling(ForgetStore)
    digest, now = id_hash(session_key(owner, session_id)), datetime.now(UTC)
    row = forgetter.session(owner, session_id, digest, now, limit, by)
    return _report(forgetter, "session", session_id, digest, now, row, owner=owner)


def forget_matching(store: Store, tenant: str, req: ForgetMessages,
                    limit: int, by: str | None = None) -> ForgetReport:
    """Forget the messages of ``req.owner`` that ``req`` chooses and what rests only on them;
    `TooLarge` (nothing deleted) beyond ``limit`` messages."""
    forgetter = store.tenant(tenant).sibling(ForgetStore)
    key = req.filter_key()
    digest, now = id_hash(key), datetime.now(UTC)
    filters = Filters(req.session_id, req.time_from, req.time_to, condition(req.metadata))
    field = next(f for f in ("metadata", "session_id", "time_from", "time_to")
                 if getattr(req, f) is not None)
    row = forgetter.matching(req.owner, filters, digest, now, limit, field, by)
    return _report(forgetter, "messages", key, digest, now, row, owner=req.owner)


def _report(forgetter: ForgetStore, kind: Kind, id_: str, digest: str, now: datetime,
            row: Row | None, owner: str | None = None) -> ForgetReport:
    if row is None:
        before = forgetter.forgotten_before(kind, digest)
        if before is None:
            raise NotFound(f"no {kind} {id_!r}" + (f" of owner {owner!r}" if owner else ""))
        return ForgetReport(kind=kind, id=id_, owner=owner, already_forgotten=True,
                            forgotten_at=before)
    return ForgetReport(kind=kind, id=id_, owner=owner, forgotten_at=now, removed=row["removed"],
                        facts=row["facts"], episodes=row["episodes"],
                        supersessions=row["supersessions"], reformation_jobs=row["jobs"])
