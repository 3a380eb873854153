"""Vector recall on either Neo4j line: on 2026.01+ tenant and owner are filtered inside the index
(Cypher 25 SEARCH over indexes WITH filter properties), on 5.x after it (over-fetch, exact scan
when that runs dry). Either way: only the caller's tenant and owner, session and time filters
applied, and on a small set the same hits as the exact scan. Runs on the default line
(2026 when a Java 21+ is found), or on either with `make integration-2026|integration-5.26`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from neo4j.exceptions import DatabaseError
from neo4j.vector import Vector

from graphmem import cypher as named
from graphmem.models import MessageIn
from graphmem.service import Memory
from graphmem.store.connection import (
    VECTOR_INDEXES,
    declared_properties,
    filters_in_index,
    index_quantized,
    version_key,
)
from graphmem.store.tenant import Filters
from graphmem.store.windows import WindowStore
from tests.integration.helpers import T0, msg, owner

TEXTS = [
    "I adopted a grey cat from the shelter.", "We hiked up to the glacier on Sunday.",
    "My sister plays the cello in an orchestra.", "The bakery on the corner sells rye bread.",
    "I am reading a novel about a lighthouse keeper.", "Our team won the chess tournament.",
    "The dentist moved my appointment to Friday.", "I planted tomatoes and basil this spring.",
    "We watched the meteor shower from the roof.", "My laptop battery died during the talk.",
    "The train to Porto was two hours late.", "I learned to make dumplings from my grandmother.",
]


def _ingest(memory: Memory, tenant: str, who: str, session: str = "s1", start: int = 0) -> None:
    rows = [msg(start + i, who, session=session, text=t) for i, t in enumerate(TEXTS)]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(r) for r in rows])


def _vector(memory: Memory, text: str) -> list[float]:
    return memory.embedder.embed([text])[0]


def _failing_search(memory: Memory) -> Callable[..., list[dict[str, Any]]]:
    """The store's query runner, failing every SEARCH query as Neo4j 2026.08.1 was seen to
    (patch it in as ``memory.store._execute``)."""
    execute = memory.store._execute

    def failing(name: str, write: bool, params: dict[str, Any],
                plain: bool = False) -> list[dict[str, Any]]:
        if name.endswith(".search"):
            raise DatabaseError("Index 33554375 out of bounds for length 31")
        return execute(name, write, params, plain)

    return failing


def test_the_store_knows_its_line_and_built_the_matching_indexes(memory: Memory,
                                                                 cypher: Any) -> None:
    store = memory.store
    assert store.vector_filters == filters_in_index(store.server_version)
    found = {r["name"]: set(r["properties"]) for r in cypher(
        "SHOW VECTOR INDEXES YIELD name, properties, state WHERE state = 'ONLINE' "
        "RETURN name, properties")}
    wanted = declared_properties(named.load("schema/vector/filtered"))
    for name in VECTOR_INDEXES:
        assert found[name] == (wanted[name] if store.vector_filters else {"embedding"}), name


def test_vector_search_sees_only_its_tenant_and_owner(memory: Memory, tenant: str) -> None:
    who, neighbour = owner(), owner()
    other_tenant = f"{tenant}-other"
    for t, o in ((tenant, who), (tenant, neighbour), (other_tenant, who)):
        _ingest(memory, t, o)
    query = _vector(memory, "a cat from the animal shelter")
    for t, o in ((tenant, who), (tenant, neighbour), (other_tenant, who)):
        hits = memory.store.tenant(t).vector_search(o, query, 5, 8, Filters())
        assert len(hits) == 5
        assert all(h.startswith(f"{o}-s1-") for h, _ in hits), hits
        assert hits[0][0] == f"{o}-s1-0"
        ids = {h for h, _ in hits}
        assert ids <= {r["id"] for r in memory.store.tenant(t).get_messages(sorted(ids))}
    assert memory.store.tenant(f"{tenant}-nobody").vector_search(who, query, 5, 8,
                                                                Filters()) == []


def test_search_after_deletions_answers_for_owners_with_and_without_vectors(
        memory: Memory, tenant: str) -> None:
    """Neo4j 2026.08.1 can fail a SEARCH whose filter matches no vector left once vectors were
    deleted from the index; the over-fetching query answers instead. Either way the hits are
    right: none for an owner with nothing left, the remaining session for the other."""
    who, emptied = owner(), owner()
    for session, start in (("s1", 0), ("s2", 100), ("s3", 200)):
        _ingest(memory, tenant, who, session, start)
    _ingest(memory, tenant, emptied)
    messages = memory.for_tenant(tenant).messages
    for i in range(len(TEXTS)):
        messages.forget(f"{emptied}-s1-{i}")
        for session, start in (("s1", 0), ("s2", 100)):
            messages.forget(f"{who}-{session}-{start + i}")
    store = memory.store.tenant(tenant)
    query = _vector(memory, "a cat from the animal shelter")
    assert store.vector_search(emptied, query, 5, 8, Filters()) == []
    assert store.vector_search(owner(), query, 5, 8, Filters()) == []
    hits = store.vector_search(who, query, 5, 8, Filters())
    assert [h for h, _ in hits][:1] == [f"{who}-s3-200"]
    assert len(hits) == 5 and all(h.startswith(f"{who}-s3-") for h, _ in hits), hits


def test_session_and_time_filters_still_apply(memory: Memory, tenant: str) -> None:
    who = owner()
    _ingest(memory, tenant, who, "s1")
    _ingest(memory, tenant, who, "s2", start=100)  # 50 minutes later
    store = memory.store.tenant(tenant)
    query = _vector(memory, "a cat from the animal shelter")
    in_s2 = store.vector_search(who, query, 3, 8, Filters(session_id="s2"))
    assert [h for h, _ in in_s2][:1] == [f"{who}-s2-100"]
    assert all(h.startswith(f"{who}-s2-") for h, _ in in_s2)
    late = store.vector_search(who, query, 20, 8, Filters(time_from=T0 + timedelta(minutes=40)))
    assert late and all(h.startswith(f"{who}-s2-") for h, _ in late)
    early = store.vector_search(who, query, 20, 8, Filters(time_to=T0 + timedelta(minutes=40)))
    assert early and all(h.startswith(f"{who}-s1-") for h, _ in early)


def test_hits_equal_the_exact_scan_on_a_small_set(memory: Memory, tenant: str) -> None:
    """On 2026 SEARCH gives the exact scan's hits; on 5.x the quantised index nearly does."""
    who = owner()
    _ingest(memory, tenant, owner())  # another owner's lookalikes in the same tenant
    _ingest(memory, tenant, who)
    store = memory.store.tenant(tenant)
    for text in ("a cat from the animal shelter", "late trains", "music and instruments"):
        query = _vector(memory, text)
        hits = store.vector_search(who, query, 8, 8, Filters())
        exact = store._run("queries/recall/vector_search_exact", owner=who, vector=query, k=8,
                           **Filters().params())
        ids, exact_ids = [h for h, _ in hits], [r["id"] for r in exact]
        if memory.store.vector_filters:  # SEARCH ranks by the full vectors: the exact order
            assert ids == exact_ids, text
            assert [s for _, s in hits] == pytest.approx([r["score"] for r in exact], abs=2e-3)
        else:  # Neo4j 5 scores its int8-quantised vectors: near ties may swap
            assert ids[0] == exact_ids[0] and len(set(ids) & set(exact_ids)) >= 7, text
            assert [s for _, s in hits] == pytest.approx([r["score"] for r in exact], abs=0.01)


def test_a_query_vector_sent_as_a_vector_value_reads_the_same(memory: Memory,
                                                               tenant: str) -> None:
    """On Bolt 6 (the 2026 line) a read's ``$vector`` goes as a vector value: every query that
    takes one returns what the list of floats gives; on 5.x it stays a list."""
    store = memory.store
    assert store.vector_values == (version_key(store.server_version) >= (2025, 10))
    who = owner()
    _ingest(memory, tenant, who)
    query = _vector(memory, "a cat from the animal shelter")
    names = [n for folder in ("queries/recall", "queries/messages", "queries/episodes",
                              "queries/facts", "queries/procedural", "queries/turn_windows")
             for n in named.names(folder) if "$vector" in named.load(n)]
    params = {"owner": who, "fetch": 40, "k": 8, "size": 3, "t": T0, "known": None,
              "vector_fetch": 40, "text_fetch": 40, "query": "cat", "scope": "none",
              "tokens": "metadata_tokens:none", "limit": 10, "as_of": None,
              **Filters().params()}
    execute = store._execute  # what run() sends on, after its conversions
    sent: list[Any] = []

    def recorded(name: str, write: bool, p: dict[str, Any],
                 plain: bool = False) -> list[dict[str, Any]]:
        sent.append(p["vector"])
        return execute(name, write, p, plain)

    for name in names:
        if name.endswith(".search") and not store.vector_filters:
            continue
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(store, "_execute", recorded)
            rows = store.run(name, tenant=tenant, vector=query, **params)
        assert isinstance(sent[-1], Vector) == store.vector_values, name
        as_list = execute(name, False, {"tenant": tenant, "vector": query, **params})
        if store.vector_values:
            assert execute(name, False, {"tenant": tenant, "vector": sent[-1], **params}) \
                == as_list, name
        if name == "queries/recall/vector_search_exact":
            assert rows == as_list and rows, name


def test_sentence_and_window_vectors_are_stored_as_the_same_floats_on_either_line(
        memory: Memory, tenant: str, cypher: Any) -> None:
    """Ingest and formation send the sentence and window vectors as vector values where the
    connection carries them (Bolt 6) and as lists elsewhere; either way the store holds the very
    numbers embedded, as a list of floats (what the vector indexes and the exact scans read)."""
    who = owner()
    sent: list[list[dict[str, Any]]] = []
    real = memory.store.vector_rows

    def recorded(name: str, rows: list[dict[str, Any]], key: str = "embedding",
                 ) -> tuple[str, list[dict[str, Any]]]:
        query, out = real(name, rows, key)
        assert query.endswith(".vectors") == memory.store.vector_values
        assert all(isinstance(r[key], Vector) == memory.store.vector_values for r in out)
        sent.append(rows)
        return query, out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory.store, "vector_rows", recorded)
        _ingest(memory, tenant, who)
        memory.former.form(memory.stores(tenant), who, "s1")
    wanted = {r["id"]: r["embedding"] for rows in sent for r in rows}
    stored = {r["id"]: (r["kind"], r["e"]) for r in cypher(
        "MATCH (s {tenant: $t, owner: $o}) WHERE s:Sentence OR s:Window "
        "RETURN s.id AS id, valueType(s.embedding) AS kind, s.embedding AS e", t=tenant, o=who)}
    assert len(stored) == len(wanted) >= len(TEXTS) + 2
    for id_, vector in wanted.items():
        kind, got = stored[id_]
        assert kind.startswith("LIST<FLOAT") and got == vector, id_


def test_window_search_is_bound_and_matches_the_exact_scan(memory: Memory, tenant: str) -> None:
    who = owner()
    _ingest(memory, tenant, who)
    _ingest(memory, tenant, owner())
    memory.former.form(memory.stores(tenant), who, "s1")
    windows = WindowStore(memory.store, tenant)
    query = _vector(memory, "cello orchestra")
    hits = windows.search("vector", who, 3, 4, 8, Filters(), vector=query)
    exact = windows._run("queries/turn_windows/vector_search_exact", owner=who, size=3,
                         vector=query, k=4, **Filters().params())
    ids, exact_ids = [h["id"] for h in hits], [r["id"] for r in exact]
    if memory.store.vector_filters:
        assert ids == exact_ids
    else:  # the int8-quantised index of Neo4j 5 may swap near ties
        assert ids[0] == exact_ids[0] and len(set(ids) & set(exact_ids)) >= 3
    assert hits and {h["id"] for h in hits} <= windows.session_ids(who, "s1")


def test_an_index_without_filter_properties_is_rebuilt_with_them(memory: Memory, cypher: Any,
                                                                 tenant: str) -> None:
    if not memory.store.vector_filters:
        pytest.skip(f"Neo4j {memory.store.server_version} has no filtered vector indexes "
                    "(run with GRAPHMEM_TEST_NEO4J_VERSION=2026.08.1)")
    who = owner()
    _ingest(memory, tenant, who)
    dims = memory.embedder.dimensions
    cypher("DROP INDEX sentence_vector")
    cypher("CREATE VECTOR INDEX sentence_vector FOR (s:Sentence) ON s.embedding OPTIONS "
           "{indexConfig: {`vector.dimensions`: $d, `vector.similarity_function`: 'cosine'}}",
           d=dims)
    memory.ensure_schema()
    [row] = cypher("SHOW VECTOR INDEXES YIELD name, properties, state "
                   "WHERE name = 'sentence_vector' RETURN properties, state")
    assert set(row["properties"]) == {"embedding", "tenant", "owner"}
    assert row["state"] == "ONLINE"
    hits = memory.store.tenant(tenant).vector_search(who, _vector(memory, "cello"), 3, 8,
                                                     Filters())
    assert hits[0][0] == f"{who}-s1-2"


def test_a_failed_search_is_answered_by_the_exact_scan(memory: Memory, tenant: str) -> None:
    """Neo4j 2026.08.1 can fail a SEARCH whose LIMIT exceeds the vectors its filter matches
    (seen on a long-lived store); the query's exact scan answers then. Here the failure is
    forced on a real store: an owner with 12 sentences and 10 windows of 3 turns, asked with
    fetches of 40 and 32, gets the exact scan's hits, with and without a session filter."""
    from graphmem import metrics

    if not memory.store.vector_filters:
        pytest.skip(f"Neo4j {memory.store.server_version} runs no SEARCH")
    who = owner()
    _ingest(memory, tenant, owner())
    _ingest(memory, tenant, who)
    memory.former.form(memory.stores(tenant), who, "s1")
    store = memory.store.tenant(tenant)
    windows = WindowStore(memory.store, tenant)
    failing = _failing_search(memory)
    counted = metrics.SEARCH_FALLBACKS.labels("queries/turn_windows/vector_search.search")
    for text in ("a cat from the animal shelter", "music and instruments"):
        query = _vector(memory, text)
        for filters in (Filters(), Filters(session_id="s1")):
            exact = store._run("queries/recall/vector_search_exact", owner=who, vector=query, k=10,
                               **filters.params())
            exact_w = windows._run("queries/turn_windows/vector_search_exact", owner=who,
                                   size=3, vector=query, k=4, **filters.params())
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(memory.store, "_execute", failing)
                before = counted._value.get()
                hits = [h for h, _ in store.vector_search(who, query, 10, 8, filters)]
                found = windows.search("vector", who, 3, 4, 8, filters, vector=query)
            assert hits == [r["id"] for r in exact], (text, filters)
            assert found == exact_w, (text, filters)
            assert counted._value.get() == before + 1


def test_searches_neo4j_fails_after_deletions_are_answered_by_the_exact_scan(
        memory: Memory, tenant: str, cypher: Any) -> None:
    """The failure itself, on a real 2026.08.1: 1,000 sentence vectors of 50 owners, half of
    them then deleted in one transaction, and nothing written after that (a write after the
    deletions made it go away). A SEARCH that cannot find its LIMIT of the filter's vectors
    then fails in the server: for an owner with none at any LIMIT, for an owner with 12
    sentences at a fetch of 40. The searches still answer, with the exact scan's hits. Seen
    with quantised indexes (Neo4j's default); an unquantised one (graphmem's default) answers
    these searches itself, with the same hits."""
    from graphmem import metrics

    if not memory.store.vector_filters:
        pytest.skip(f"Neo4j {memory.store.server_version} runs no SEARCH")
    who = owner()
    _ingest(memory, tenant, who)
    cypher("UNWIND range(0, 999) AS i CREATE (:Sentence {tenant: $t, owner: 'bulk-' + (i % 50), "
           "id: 'bulk-s' + i, message_id: 'bulk-m' + i, session_id: 's1', "
           "embedding: [x IN range(1, $d) | rand() - 0.5]})", t=tenant,
           d=memory.embedder.dimensions)
    cypher("MATCH (s:Sentence {tenant: $t}) WHERE s.owner STARTS WITH 'bulk-' AND rand() < 0.5 "
           "DETACH DELETE s", t=tenant)
    store = memory.store.tenant(tenant)
    counted = metrics.SEARCH_FALLBACKS.labels("queries/recall/vector_search.search")
    before = counted._value.get()
    query = _vector(memory, "a cat from the animal shelter")
    assert store.vector_search(owner(), query, 5, 8, Filters()) == []
    hits = store.vector_search(who, query, 10, 8, Filters())  # a fetch of 40, 12 sentences
    exact = store._run("queries/recall/vector_search_exact", owner=who, vector=query, k=10,
                       **Filters().params())
    assert [h for h, _ in hits] == [r["id"] for r in exact]
    sentences = next(r for r in memory.store.run("queries/server/index_states")
                     if r["name"] == "sentence_vector")
    if not index_quantized(sentences):  # graphmem's default: SEARCH answers by itself
        assert counted._value.get() == before
    elif memory.store.server_version.startswith("2026.08."):  # the line it was seen on
        assert counted._value.get() >= before + 2


def test_one_round_trip_reads_what_the_two_queries_read(memory: Memory, tenant: str) -> None:
    """`hybrid_search` (vector and fulltext in one query) gives the hits of `vector_search` and
    `fulltext_search`: with and without session and time filters, for an owner with fewer
    messages than asked for (the exact scan), for an owner with none, and when SEARCH fails."""
    who = owner()
    _ingest(memory, tenant, owner())  # another owner's lookalikes in the same tenant
    _ingest(memory, tenant, who, "s1")
    _ingest(memory, tenant, who, "s2", start=100)
    store = memory.store.tenant(tenant)
    cases = [(who, 5, Filters()), (who, 40, Filters()), (who, 5, Filters(session_id="s2")),
             (who, 5, Filters(time_from=T0 + timedelta(minutes=40))), (owner(), 5, Filters())]
    failing = _failing_search(memory)
    for text in ("a cat from the animal shelter", "the train to Porto was late"):
        query, words = _vector(memory, text), text.replace("the ", "")
        for who_, k, filters in cases:
            apart = (store.vector_search(who_, query, k, 8, filters),
                     store.fulltext_search(who_, words, k, 8, filters))
            assert store.hybrid_search(who_, query, words, k, 8, filters) == apart, (k, filters)
            if who_ == who and k == 5:
                assert apart[0] and apart[1]
            if memory.store.vector_filters:
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(memory.store, "_execute", failing)
                    by_vector, by_text = store.hybrid_search(who_, query, words, k, 8, filters)
                # the exact scan answers: SEARCH's order (the two sessions hold the same
                # texts: ties may swap), its scores to the index's precision
                assert [_text_of(i) for i, _ in by_vector] == [_text_of(i) for i, _ in apart[0]]
                assert [s for _, s in by_vector] == pytest.approx([s for _, s in apart[0]],
                                                                  abs=2e-3)
                assert by_text == apart[1]


def _text_of(message_id: str) -> int:
    """Which of TEXTS a message of `_ingest` holds."""
    return int(message_id.rsplit("-", 1)[1]) % 100
