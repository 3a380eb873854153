"""Episodes as a search unit, and time normalisation in what is stored and rendered."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from graphmem.models import MessageIn, SearchRequest
from graphmem.retrieval import recipe
from graphmem.service import Memory
from tests.integration.helpers import T0, msg, owner

TALK = [
    "I went to a pottery class yesterday and made a bowl.",
    "Nice! Was it your first class?",
    "Yes, the teacher Mira showed us how to centre the clay.",
    "Sounds relaxing.",
    "Totally different topic: my car broke down on the highway.",
    "Oh no, did you call a tow truck?",
    "Yes, the garage says the alternator is gone.",
    "That will be expensive.",
]


def test_event_dates_are_stored(memory: Memory, tenant: str, cypher: Any) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(0, who, text=TALK[0]))])
    row = cypher("MATCH (m:Message {tenant: $t}) RETURN m.event_starts AS s, m.event_ends AS e",
                 t=tenant)[0]
    assert [d.to_native() for d in row["s"]] == [date(2023, 5, 7)]
    assert [d.to_native() for d in row["e"]] == [date(2023, 5, 7)]


def test_context_shows_resolved_dates(memory: Memory, tenant: str) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TALK)])
    req = SearchRequest(query="pottery class", owner=who, k=1)
    res = memory.ops(tenant).search_units(req)
    assert "yesterday [2023-05-07]" in res.context
    assert all("[2023-05-07]" not in h.text for h in res.hits)  # the stored text is unchanged
    raw = memory.ops(tenant).search_units(req, recipe("rrf_expand").with_(normalise_time=False))
    assert "[2023-05-07]" not in raw.context


def test_episodes_unit(memory: Memory, tenant: str) -> None:
    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TALK)])
    memory.former.form(memory.stores(tenant), who, "s1")
    res = memory.ops(tenant).search_units(SearchRequest(query="what happened to the car alternator",
                                              owner=who, units="episodes", k=1))
    assert len(res.episodes) == 1
    episode = res.episodes[0]
    assert [h.id for h in res.hits] == episode.messages
    assert all(h.rules == ["episode"] for h in res.hits)
    assert any("alternator" in h.text for h in res.hits)
    budgeted = memory.ops(tenant).search_units(SearchRequest(query="pottery and the car", owner=who,
                                                   units="episodes", max_messages=3))
    assert len(budgeted.episodes) == 1  # the first episode is kept whole, the budget is honest
    assert len(budgeted.hits) == len(budgeted.episodes[0].messages)


def test_as_of_leaves_out_episodes_told_after_it(memory: Memory, tenant: str) -> None:
    """An episode is in a search as of t only when every turn it rests on was sent by t (its
    last turn, reported_until): a session a day later, or one still going on at t, is not."""
    who = owner()
    later = (T0 + timedelta(days=1)).isoformat()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TALK[:4])])
    memory.ops(tenant).ingest_messages([
        MessageIn.model_validate(msg(i, who, "s2", text=t, timestamp=later))
        for i, t in enumerate(TALK[4:])])
    memory.former.form(memory.stores(tenant), who, "s1")
    memory.former.form(memory.stores(tenant), who, "s2")
    query = "the pottery class and the car alternator"
    every = memory.ops(tenant).search_units(
        SearchRequest(query=query, owner=who, units="episodes", k=5))
    told = {e.id: max(h.timestamp for h in every.hits if h.id in e.messages)
            for e in every.episodes}
    assert {t.date() for t in told.values()} == {date(2023, 5, 8), date(2023, 5, 9)}
    first_over = max(t for t in told.values() if t.day == 8)
    for method in ("rrf", "vector", "fulltext"):
        asked = SearchRequest(query=query, owner=who, units="episodes", k=5, method=method,
                              as_of=first_over)
        res = memory.ops(tenant).search_units(asked)
        assert res.episodes and all(told[e.id] <= first_over for e in res.episodes)
        assert all(h.timestamp <= first_over for h in res.hits)
        assert "alternator" not in res.context
        before = asked.model_copy(update={"as_of": first_over - timedelta(seconds=1)})
        found = memory.ops(tenant).search_units(before).episodes
        assert all(told[e.id] < first_over for e in found)


def test_query_time_boosts_and_restricts(memory: Memory, tenant: str) -> None:
    from datetime import UTC, datetime, timedelta

    who = owner()
    may = datetime(2023, 5, 10, 12, tzinfo=UTC)
    june = datetime(2023, 6, 20, 12, tzinfo=UTC)
    memory.ops(tenant).ingest_messages([
        MessageIn(id=f"{who}-a", owner=who, session_id="may", speaker="ann",
                  text="We went hiking in the hills.", timestamp=may),
        MessageIn(id=f"{who}-b", owner=who, session_id="june", speaker="ann",
                  text="We went hiking in the mountains, great hiking.", timestamp=june),
        MessageIn(id=f"{who}-c", owner=who, session_id="june", speaker="ann",
                  text="Last month [sic] we hiked by the lake.", timestamp=june + timedelta(1)),
    ])
    now = datetime(2023, 12, 1, tzinfo=UTC)

    def ids(hint: str) -> list[str]:
        req = SearchRequest(query="hiking in May 2023", owner=who, method="rrf", k=3,
                            time_hint=hint, as_of=now)  # type: ignore[arg-type]
        hits = memory.ops(tenant).search_units(req).hits
        return [h.id for h in sorted(hits, key=lambda h: -h.score)]

    boosted = ids("boost")  # a (sent in May) and c (about May) before b, though b says hiking twice
    assert set(boosted[:2]) == {f"{who}-a", f"{who}-c"} and boosted[2] == f"{who}-b"
    top = memory.ops(tenant).search_units(SearchRequest(query="hiking in May 2023", owner=who,
                                              method="rrf", k=1, as_of=now)).hits[0]
    assert "time" in top.rules
    assert set(ids("restrict")) == {f"{who}-a", f"{who}-c"}  # c says "last month" in June
    assert set(ids("off")) == {f"{who}-a", f"{who}-b", f"{who}-c"}


def test_forgetting_an_owner_removes_derived_memory(memory: Memory, tenant: str,
                                                      cypher: Any) -> None:
    from graphmem.facts.models import ObservationIn

    who = owner()
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TALK)])
    memory.former.form(memory.stores(tenant), who, "s1")
    memory.facts.observe(memory.stores(tenant), [ObservationIn(owner=who, subject=who, type="car",
                                                content="alternator broken",
                                                sources=[f"{who}-s1-6"])])
    report = memory.ops(tenant).delete_owner(who)
    assert report.messages == len(TALK) and report.facts == 1 and report.episodes >= 1
    left = cypher("MATCH (n {tenant: $t}) WHERE n.owner = $o RETURN labels(n) AS l",
                  t=tenant, o=who)
    assert left == []
