"""Fulltext recall scoped per tenant and owner in Lucene itself (the ``scope`` property of every
fulltext index): a large tenant never crowds a small one out, isolation holds, and a database
built before the scope is migrated by the schema apply."""

from __future__ import annotations

import time
from typing import Any

from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store.scope import FULLTEXT_INDEXES, scope_token
from tests.integration.helpers import msg, owner

CROWD = 20_500


def _crowd(cypher: Any, tenant: str, who: str, n: int) -> None:
    """``n`` messages that all match "lighthouse", written in one query (no embedding)."""
    cypher(
        "UNWIND range(1, $n) AS i "
        "CREATE (:Message {tenant: $tenant, owner: $owner, id: 'crowd-' + i, session_id: 's', "
        "speaker: 'x', text: 'lighthouse lighthouse keeper ' + i, "
        "search_text: 'x: lighthouse lighthouse keeper ' + i, scope: $scope, "
        "timestamp: datetime('2024-01-01T00:00:00Z')})",
        n=n, tenant=tenant, owner=who, scope=scope_token(tenant, who))


def _fulltext(memory: Memory, tenant: str, who: str, query: str, k: int = 5) -> list[str]:
    req = SearchRequest(query=query, owner=who, method="fulltext", k=k)
    return [h.id for h in memory.ops(tenant).search_units(req).hits]


def test_a_small_tenant_is_found_beside_a_large_one(
    memory: Memory, tenant: str, cypher: Any,
) -> None:
    big, small, who = f"{tenant}-big", f"{tenant}-small", owner()
    _crowd(cypher, big, who, CROWD)
    try:
        memory.ops(small).ingest_messages([MessageIn.model_validate(
            msg(0, who, text="The lighthouse on the cliff was repainted."))])
        started = time.perf_counter()
        ids = _fulltext(memory, small, who, "lighthouse")
        seconds = time.perf_counter() - started
        assert ids == [f"{who}-s1-0"]
        assert seconds < 2.0  # one scoped index query, not a widening over-fetch
        # the large tenant's own search still works and sees only its own owner
        assert len(_fulltext(memory, big, who, "lighthouse keeper")) == 5
    finally:
        while cypher("MATCH (m:Message {tenant: $t}) WITH m LIMIT 10000 DETACH DELETE m "
                     "RETURN count(*) AS n", t=big)[0]["n"]:
            pass
        memory.for_tenant(small).messages.forget_owner(who)


def test_tenants_and_owners_are_isolated(memory: Memory, tenant: str) -> None:
    alice, bob = owner(), owner()
    other = f"{tenant}-other"
    for t, who, text in ((tenant, alice, "My ferret is called Ziggy."),
                         (tenant, bob, "Ziggy the ferret bit me."),
                         (other, alice, "Ziggy ferret again.")):
        memory.ops(t).ingest_messages([MessageIn.model_validate(msg(0, who, text=text))])
    try:
        assert _fulltext(memory, tenant, alice, "Ziggy ferret") == [f"{alice}-s1-0"]
        assert _fulltext(memory, tenant, bob, "Ziggy ferret") == [f"{bob}-s1-0"]
        assert _fulltext(memory, other, alice, "Ziggy ferret") == [f"{alice}-s1-0"]
        assert _fulltext(memory, other, bob, "Ziggy ferret") == []
        # a query of stop words only matches no text: nothing, not the owner's every message
        assert _fulltext(memory, tenant, alice, "the of and") == []
    finally:
        for t, who in ((tenant, alice), (tenant, bob), (other, alice)):
            memory.for_tenant(t).messages.forget_owner(who)


def test_schema_apply_migrates_an_old_database(
    memory: Memory, tenant: str, cypher: Any,
) -> None:
    """Indexes without ``scope`` and nodes without it, as a database of the previous release
    has them: the schema apply fills the scope in, rebuilds the indexes, and search finds the
    old messages."""
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(
        msg(0, who, text="The marmalade recipe needs Seville oranges."))])
    cypher("MATCH (m:Message {tenant: $t}) REMOVE m.scope", t=tenant)
    cypher("DROP INDEX message_fulltext")
    cypher("CREATE FULLTEXT INDEX message_fulltext FOR (m:Message) ON EACH [m.search_text] "
           "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', "
           "`fulltext.eventually_consistent`: false}}")
    cypher("CALL db.awaitIndexes(60)")
    try:
        memory.store.apply_schema(memory.embedder.name, memory.embedder.dimensions)
        rows = cypher("SHOW INDEXES YIELD name, properties, state WHERE name IN $names "
                      "RETURN name, properties, state", names=list(FULLTEXT_INDEXES))
        assert {r["name"] for r in rows} == set(FULLTEXT_INDEXES)
        assert all(r["properties"][-1] == "scope" and r["state"] == "ONLINE" for r in rows)
        stored = cypher("MATCH (m:Message {tenant: $t}) RETURN m.scope AS scope", t=tenant)
        assert stored == [{"scope": scope_token(tenant, who)}]
        assert _fulltext(memory, tenant, who, "Seville marmalade") == [f"{who}-s1-0"]
        # a second apply has nothing to migrate
        memory.store.apply_schema(memory.embedder.name, memory.embedder.dimensions)
        assert _fulltext(memory, tenant, who, "Seville marmalade") == [f"{who}-s1-0"]
    finally:
        memory.for_tenant(tenant).messages.forget_owner(who)
