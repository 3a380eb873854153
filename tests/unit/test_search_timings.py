"""The per-stage timings of one search (no database: a fake store), and the fulltext scope
token."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from graphmem.models import SearchRequest
from graphmem.retrieval import Recipe, recipe
from graphmem.retrieval.search import STAGES, Runtime, search
from graphmem.store import Filters, TenantStore, Windows
from graphmem.store.episodes import EpisodeStore
from graphmem.store.facts import FactStore
from graphmem.store.scope import scope_token, scopes
from tests.support.fakes import FakeEmbedder

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)



class FakeStore:
    """Three messages in a row; every list finds the middle one first."""

    ids = ("m0", "m1", "m2")

    def vector_search(self, owner: str, vector: list[float], k: int, overfetch: int,
                      filters: Filters) -> list[tuple[str, float]]:
        return [("m1", 0.9), ("m0", 0.5)]

    def fulltext_search(self, owner: str, query: str, k: int, overfetch: int,
                        filters: Filters) -> list[tuple[str, float]]:
        return [("m1", 3.0), ("m2", 1.0)]

    def hybrid_search(self, owner: str, vector: list[float], query: str, k: int,
                      overfetch: int, filters: Filters,
                      ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        return (self.vector_search(owner, vector, k, overfetch, filters),
                self.fulltext_search(owner, query, k, overfetch, filters))

    def in_time_range(self, ids: list[str], start: datetime, end: datetime) -> set[str]:
        return set(ids)

    def get_messages(self, ids: list[str]) -> list[dict[str, Any]]:
        return [{"id": i, "text": f"text {i}", "speaker": "a", "timestamp": T0,
                 "session_id": "s", "owner": "o"} for i in ids]

    def windows(self, ids: list[str], before: int, after: int,
                as_of: object = None) -> Windows:
        records = {r["id"]: r for r in self.get_messages(list(self.ids))}
        return Windows({i: list(self.ids) for i in ids}, {("m0", "m1"), ("m1", "m2")}, records)


@dataclass(frozen=True)
class FakeStores:
    """The stores a search reads (`graphmem.retrieval.search.Stores`)."""

    messages: TenantStore
    facts: FactStore
    episodes: EpisodeStore


def _search(req: SearchRequest, timings: dict[str, float] | None = None,
            rs: Recipe | None = None) -> Any:
    stores = FakeStores(cast(TenantStore, FakeStore()), cast(FactStore, None),
                        cast(EpisodeStore, None))
    return search(stores, rs or recipe(req.method), req, Runtime(FakeEmbedder()), timings)


def test_a_search_times_each_stage_when_asked() -> None:
    """In one round trip the message lists are one stage (``hybrid``); in two, one each."""
    req = SearchRequest(query="what happened in May 2024?", owner="o", k=2)
    untimed = _search(req).model_dump(exclude={"trace"})
    for one, apart in ((True, {"vector", "fulltext"}), (False, {"hybrid"})):
        timings: dict[str, float] = {}
        timed = _search(req, timings, recipe(req.method).with_(one_round_trip=one))
        assert set(timings) == set(STAGES) - apart
        assert all(ms >= 0 for ms in timings.values())
        assert timed.model_dump(exclude={"trace"}) == untimed


def test_stages_not_run_are_not_timed() -> None:
    timings: dict[str, float] = {}
    _search(SearchRequest(query="hello there", owner="o", k=2, method="fulltext"), timings)
    assert "embed" not in timings and "vector" not in timings and "time_range" not in timings
    assert {"fulltext", "fusion", "expansion", "pack"} <= set(timings)


def test_the_scope_token_is_digits_and_tells_tenants_and_owners_apart() -> None:
    token = scope_token("acme", "alice")
    assert token == scope_token("acme", "alice") and token.isdigit() and len(token) == 20
    assert len({token, scope_token("acme", "bob"), scope_token("acme2", "alice"),
                scope_token("acm", "ealice")}) == 4
    assert scopes("acme", ["alice", "bob", "alice"]) == {
        "alice": token, "bob": scope_token("acme", "bob")}
