"""Turn windows on the real store: built by formation, searched by rrf_windows, bound to their
tenant, deleted with their owner, rebuilt around a late message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store import Filters
from graphmem.store.windows import WindowStore
from tests.integration.helpers import T0, msg, owner
from tests.integration.test_search import TALK


def _ingest(memory: Memory, tenant: str, who: str) -> None:
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TALK)])


def _windows(cypher: Any, tenant: str, who: str) -> list[dict[str, Any]]:
    return cypher(
        "MATCH (w:Window {tenant: $tenant, owner: $owner})-[c:COVERS]->(m:Message) "
        "WITH w, m ORDER BY c.position "
        "RETURN w.id AS id, w.size AS size, w.message_ids AS ids, collect(m.id) AS covered",
        tenant=tenant, owner=who)


def _chain(cypher: Any, tenant: str, who: str) -> list[str]:
    rows = cypher("MATCH (m:Message {tenant: $tenant, owner: $owner}) RETURN m.id AS id "
                  "ORDER BY m.timestamp", tenant=tenant, owner=who)
    return [r["id"] for r in rows]


def _consecutive(window: list[str], chain: list[str]) -> bool:
    start = chain.index(window[0])
    return chain[start : start + len(window)] == window


def test_formation_builds_3_and_5_turn_windows(memory: Memory, tenant: str,
                                               cypher: Any) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    report = memory.former.form(memory.stores(tenant), who, "s1")
    rows = _windows(cypher, tenant, who)
    sizes = sorted(r["size"] for r in rows)
    assert sizes == [3] * 8 + [5] * 6 and report.windows == 14
    chain = _chain(cypher, tenant, who)
    for r in rows:
        assert r["covered"] == r["ids"] and len(r["ids"]) == r["size"]
        assert _consecutive(r["ids"], chain)
    assert memory.former.form(memory.stores(tenant), who, "s1").windows == 0  # idempotent


def test_rrf_windows_finds_the_turn_through_windows(memory: Memory, tenant: str) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    memory.former.form(memory.stores(tenant), who, "s1")
    res = memory.ops(tenant).search_units(SearchRequest(query="Matterhorn trail", owner=who,
                                              method="rrf_windows", k=1))
    nuclei = [h for h in res.hits if h.nucleus]
    # the question and its answer ("trail" / "Matterhorn") rank within a hair of each other, and
    # the vector index is approximate: whichever wins, the answer comes back, through a window
    assert nuclei and "window" in nuclei[0].rules
    assert any(h.text.startswith("The one near Zermatt") for h in res.hits)
    assert "session" not in nuclei[0].rules  # the session prior is off by default
    budget = memory.ops(tenant).search_units(SearchRequest(query="cello teacher", owner=who,
                                                 method="rrf_windows", max_messages=3))
    assert len(budget.hits) == 3


def test_windows_are_bound_to_their_tenant(memory: Memory, tenant: str) -> None:
    who = owner()
    other = tenant + "-other"
    for t in (tenant, other):
        _ingest(memory, t, who)
        memory.former.form(memory.stores(t), who, "s1")
    mine = WindowStore(memory.store, tenant).session_ids(who, "s1")
    theirs = WindowStore(memory.store, other).session_ids(who, "s1")
    assert len(mine) == len(theirs) == 14
    vector = memory.embedder.embed(["Matterhorn"])[0]
    for t in (tenant, other):
        hits = WindowStore(memory.store, t).search("vector", who, 3, 5, 8, Filters(),
                                                   vector=vector)
        texts = WindowStore(memory.store, t).search("fulltext", who, 3, 5, 8, Filters(),
                                                    query="Matterhorn")
        assert hits and texts
        assert {h["id"] for h in hits} <= WindowStore(memory.store, t).session_ids(who, "s1")
        assert {h["id"] for h in texts} <= WindowStore(memory.store, t).session_ids(who, "s1")
    memory.ops(other).delete_owner(who)


def test_windows_are_deleted_with_their_owner(memory: Memory, tenant: str,
                                              cypher: Any) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    memory.former.form(memory.stores(tenant), who, "s1")
    report = memory.ops(tenant).delete_owner(who)
    assert report.windows == 14
    assert _windows(cypher, tenant, who) == []
    assert cypher("MATCH (w:Window {tenant: $tenant, owner: $owner}) RETURN count(w) AS n",
                  tenant=tenant, owner=who)[0]["n"] == 0


def test_a_late_message_rebuilds_the_windows_around_it(memory: Memory, tenant: str,
                                                       cypher: Any) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    memory.former.form(memory.stores(tenant), who, "s1")
    before = {r["id"] for r in _windows(cypher, tenant, who)}
    late = msg(99, who, text="Oh, and I forgot my camera at the hut.")
    late["timestamp"] = (T0 + timedelta(seconds=30 * 3 + 10)).isoformat()  # between 3 and 4
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(late)])
    report = memory.former.form(memory.stores(tenant), who, "s1")
    rows = _windows(cypher, tenant, who)
    chain = _chain(cypher, tenant, who)
    assert len(chain) == 11 and chain.index(late["id"]) == 4
    assert sorted(r["size"] for r in rows) == [3] * 9 + [5] * 7
    assert all(_consecutive(r["ids"], chain) for r in rows)
    after = {r["id"] for r in rows}
    # only the windows over the touched stretch changed: 3 + 5 new of size 3 and 5 ... exactly
    # those that contain the late message
    assert after - before == {r["id"] for r in rows if late["id"] in r["ids"]}
    assert report.windows == len(after - before)


def test_a_stale_plan_is_not_written(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    store = WindowStore(memory.store, tenant)
    done = store.replace(who, "s1", messages=3, keep=[], fresh=[], now=datetime.now(UTC))
    assert done is None
    assert _windows(cypher, tenant, who) == []
