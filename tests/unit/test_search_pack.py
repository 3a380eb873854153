"""Unit tests of graphmem.retrieval.search.pack: the hits (best first, or in time), the windows
around them, and the context rendered in time.

`pack` is pure: it takes the selection, the message records as the store returns them (a mapping
id -> properties) and the NEXT links seen; no database here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from graphmem.models import SearchRequest
from graphmem.retrieval.context import estimate_tokens
from graphmem.retrieval.expansion import Selected
from graphmem.retrieval.search import pack

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
REQ = SearchRequest(query="support group", owner="alice")
BY_TIME = SearchRequest(query="support group", owner="alice", order="time")


def record(id_: str, minute: int, session: str = "s1", speaker: str = "Caroline") -> dict[str, Any]:
    return {
        "id": id_, "owner": "alice", "session_id": session, "speaker": speaker,
        "text": f"text of {id_}", "timestamp": T0 + timedelta(minutes=minute),
    }


def neighbour(id_: str, score: float) -> Selected:
    return Selected(id_, score, ("neighbour",), False)


def session_records(n: int, session: str = "s1") -> dict[str, dict[str, Any]]:
    return {f"{session}-{i}": record(f"{session}-{i}", i, session) for i in range(n)}


def test_hits_best_first_by_default_in_time_on_request_context_in_time() -> None:
    records = session_records(5)
    selected = [
        Selected("s1-3", 0.5, ("vector",), True),
        neighbour("s1-4", 0.3),
        neighbour("s1-2", 0.4),
        Selected("s1-0", 0.2, ("fulltext",), True),
    ]
    result = pack(REQ, selected, records, set(pairwise(records)))
    assert [h.id for h in result.hits] == ["s1-3", "s1-2", "s1-4", "s1-0"]
    by_time = pack(BY_TIME, selected, records, set(pairwise(records)))
    assert [h.id for h in by_time.hits] == ["s1-0", "s1-2", "s1-3", "s1-4"]
    for res in (result, by_time):  # the context is in time either way
        lines = [ln for ln in res.context.splitlines() if ln and not ln.startswith("##")]
        assert [ln.rsplit(" ", 1)[1] for ln in lines] == ["s1-0", "s1-2", "s1-3", "s1-4"]


def test_k_hits_each_with_its_window_not_counted_as_hits() -> None:
    """Without a budget: k hits (the nuclei, best first), each carrying the turns around it
    (up to 1 before and 2 after here); the context renders hits and windows in time."""
    records = session_records(12)
    links = set(pairwise(records))
    nuclei = {"s1-2": 0.9, "s1-9": 0.6, "s1-5": 0.3}
    selected = [Selected(i, s, ("vector",), True) for i, s in nuclei.items()]
    selected += [neighbour(i, 0.1) for i in ["s1-1", "s1-3", "s1-4", "s1-8", "s1-10", "s1-11",
                                             "s1-6", "s1-7"]]
    req = SearchRequest(query="q", owner="alice", k=2)
    result = pack(req, selected, records, links, reach=(1, 2))
    assert [h.id for h in result.hits] == ["s1-2", "s1-9"]
    assert [t.id for t in result.hits[0].window] == ["s1-1", "s1-3", "s1-4"]
    assert [t.id for t in result.hits[1].window] == ["s1-8", "s1-10", "s1-11"]
    assert result.hits[0].window[0].text == "text of s1-1"
    shown = [ln.rsplit(" ", 1)[1] for ln in result.context.splitlines()
             if ln and not ln.startswith("#")]
    assert shown == ["s1-1", "s1-2", "s1-3", "s1-4", "s1-8", "s1-9", "s1-10", "s1-11"]
    assert result.context.count("## session") == 2  # s1-5 .. s1-7 belong to no kept hit


def test_a_window_stops_at_a_gap_and_at_the_session_end() -> None:
    records = session_records(3)
    selected = [Selected("s1-2", 0.5, ("vector",), True), neighbour("s1-0", 0.1)]
    result = pack(REQ, selected, records, {("s1-0", "s1-1")}, reach=(2, 2))
    assert [h.id for h in result.hits] == ["s1-2"]
    assert result.hits[0].window == []  # s1-1 was not chosen: s1-0 is not consecutive to it


def test_a_window_steps_over_a_turn_a_filter_left_out() -> None:
    """A metadata filter leaves s1-2 out of the window of s1-3: s1-1, two steps away along NEXT,
    is still in it; s1-0 is three steps away, past ``before``."""
    records = session_records(4)
    del records["s1-2"]
    selected = [Selected("s1-3", 0.5, ("vector",), True), neighbour("s1-1", 0.1),
                neighbour("s1-0", 0.1)]
    chain = {("s1-0", "s1-1"), ("s1-1", "s1-2"), ("s1-2", "s1-3")}
    result = pack(REQ, selected, records, chain, reach=(2, 2))
    assert [t.id for t in result.hits[0].window] == ["s1-1"]
    assert result.context.count("## session") == 2  # the gap splits the rendering


def test_hits_carry_rules_nucleus_score_and_record_fields() -> None:
    records = session_records(3)
    selected = [
        Selected("s1-1", 0.7, ("vector", "fulltext"), True),
        Selected("s1-2", 0.7, ("fulltext", "neighbour"), True),
        neighbour("s1-0", 0.7),
    ]
    hits = {h.id: h for h in pack(REQ, selected, records, set()).hits}
    assert hits["s1-1"].rules == ["vector", "fulltext"]
    assert hits["s1-1"].nucleus is True
    assert hits["s1-1"].score == 0.7
    assert hits["s1-2"].rules == ["fulltext", "neighbour"]
    assert hits["s1-0"].rules == ["neighbour"]
    assert hits["s1-0"].nucleus is False
    h = hits["s1-0"]
    assert (h.text, h.speaker, h.owner, h.session_id) == ("text of s1-0", "Caroline", "alice", "s1")
    assert h.timestamp == T0


def test_result_echoes_query_and_method() -> None:
    req = SearchRequest(query="q", owner="alice", method="rrf")
    result = pack(req, [], {}, set())
    assert (result.query, result.method) == ("q", "rrf")
    assert result.hits == []
    assert result.context == ""
    assert result.context_tokens == 0


def test_context_merges_linked_runs_and_splits_at_gaps() -> None:
    records = session_records(6)
    links = set(pairwise(records))  # s1-0 -> s1-1 -> ... -> s1-5
    selected = [neighbour(i, 0.5) for i in ["s1-5", "s1-0", "s1-1", "s1-4"]]
    context = pack(REQ, selected, records, links).context
    paragraphs = context.split("\n\n")
    assert len(paragraphs) == 2
    assert paragraphs[0].splitlines() == [
        "## session s1 · 2023-05-08 13:00 UTC",
        "[2023-05-08 13:00] Caroline: text of s1-0",
        "[2023-05-08 13:01] Caroline: text of s1-1",
    ]
    assert paragraphs[1].splitlines()[0] == "## session s1 · 2023-05-08 13:04 UTC"
    assert len(paragraphs[1].splitlines()) == 3


def test_two_sessions_give_two_blocks() -> None:
    records = {**session_records(2, "s1"), **session_records(2, "s2")}
    records["s2-0"]["timestamp"] += timedelta(days=1)
    records["s2-1"]["timestamp"] += timedelta(days=1)
    links = {("s1-0", "s1-1"), ("s2-0", "s2-1")}
    selected = [neighbour(i, 0.1) for i in records]
    result = pack(REQ, selected, records, links)
    headers = [ln for ln in result.context.splitlines() if ln.startswith("## ")]
    assert headers == [
        "## session s1 · 2023-05-08 13:00 UTC",
        "## session s2 · 2023-05-09 13:00 UTC",
    ]


def test_context_tokens_is_the_estimate_of_the_context() -> None:
    records = session_records(4)
    selected = [neighbour(i, 0.3) for i in records]
    result = pack(REQ, selected, records, set(pairwise(records)))
    assert result.context
    assert result.context_tokens == estimate_tokens(result.context)


def test_selected_id_missing_from_records_is_skipped() -> None:
    records = session_records(3)
    deleted = records.pop("s1-1")  # deleted between selection and read
    selected = [neighbour("s1-0", 0.4), neighbour(deleted["id"], 0.4), neighbour("s1-2", 0.4)]
    result = pack(REQ, selected, records, {("s1-0", "s1-1"), ("s1-1", "s1-2")})
    assert {h.id for h in result.hits} == {"s1-0", "s1-2"}
    assert "s1-1" not in result.context
    assert result.context.count("## session") == 2  # the gap splits the cluster


def test_equal_timestamps_ordered_by_session_then_id() -> None:
    records = {"b": record("b", 0, "s2"), "a": record("a", 0, "s2"), "c": record("c", 0, "s1")}
    result = pack(BY_TIME, [neighbour(i, 0.1) for i in "abc"], records, set())
    assert [h.id for h in result.hits] == ["c", "a", "b"]


def test_equal_timestamps_follow_the_next_chain() -> None:
    # one session, two turns sent in one batch with the same timestamp: the chain is z -> a
    written = {"recorded_at": T0 + timedelta(days=1)}
    records = {
        "z": {**record("z", 0), **written, "batch_index": 0},
        "a": {**record("a", 0), **written, "batch_index": 1},
    }
    result = pack(BY_TIME, [neighbour("z", 0.5), neighbour("a", 0.5)], records, {("z", "a")})
    assert [h.id for h in result.hits] == ["z", "a"]
    assert result.context.count("## session") == 1


@given(st.permutations([f"s1-{i}" for i in range(6)]), st.integers(0, 6))
def test_property_order_independent_of_selection_order(order: list[str], drop: int) -> None:
    records = session_records(6)
    selected = [neighbour(i, 0.5) for i in order[drop:]]
    result = pack(BY_TIME, selected, records, set(pairwise(records)))
    times = [h.timestamp for h in result.hits]
    assert times == sorted(times)
    assert {h.id for h in result.hits} == set(order[drop:])
    assert result.context_tokens == estimate_tokens(result.context)
