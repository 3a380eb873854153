"""The fulltext scope of a tenant and owner: a token every fulltext-indexed node carries in its
``scope`` property (indexed beside ``search_text``), so that a fulltext query names it
(`scoped`) and Lucene reads only that owner's nodes: a large tenant never crowds a small one
out of the fetch. The token is digits only (a hash), which the english analyser keeps whole.

Also the migration of a database whose fulltext indexes predate the scope (`migrate`): the
``scope`` of every indexed node is filled in, in bounded transactions, then those indexes are
dropped; the schema files create them anew with both properties.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row

FULLTEXT_INDEXES = ("message_fulltext", "fact_fulltext", "episode_fulltext", "window_fulltext",
                    "case_fulltext", "skill_fulltext")
"""Every fulltext index: each is ``ON EACH [n.search_text, n.scope]``."""
BACKFILL_BATCH = 10_000


def scope_token(tenant: str, owner: str) -> str:
    """The scope of ``owner`` in ``tenant``: 20 decimal digits of a 64-bit hash."""
    digest = hashlib.blake2b(f"{tenant}\x1f{owner}".encode(), digest_size=8).digest()
    return f"{int.from_bytes(digest, 'big'):020d}"


def scopes(tenant: str, owners: Iterable[str]) -> dict[str, str]:
    """Owner -> its scope, for a batch of rows of one tenant."""
    return {o: scope_token(tenant, o) for o in set(owners)}


def stale(indexes: Iterable[Row]) -> list[str]:
    """Our fulltext indexes among ``indexes`` (rows of ``queries/server/index_states``) that do not
    index ``scope`` yet (a database built before it)."""
    return [i["name"] for i in indexes
            if i["name"] in FULLTEXT_INDEXES and "scope" not in (i["properties"] or [])]


def migrate(store: Connection, indexes: Iterable[Row], batch: int = BACKFILL_BATCH) -> list[str]:
    """Bring a database built before the scope up to date (``indexes``: its index states);
    returns the indexes dropped (the schema files then create them with ``scope``). Nothing
    happens on an up-to-date database. Safe to interrupt and run again: the old indexes go only
    after the backfill is done."""
    old = stale(indexes)
    if not old:
        return []
    pairs = store.run("queries/scope/pending_owners")
    table: dict[str, dict[str, str]] = {}
    for p in pairs:
        table.setdefault(p["tenant"], {})[p["owner"]] = scope_token(p["tenant"], p["owner"])
    if table:
        store.run_statements("queries/scope/backfill", scopes=table, batch=batch)
    for name in old:
        store.run_statements("queries/scope/drop_index", index=name)
    return old
