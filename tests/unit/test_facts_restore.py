"""Facts from an export as rows to store again: stored properties kept (times as datetimes),
the search text and normalised content made again, sources that are messages or facts kept
(episodes are formed again), revisions kept with their reasons."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from graphmem.facts.restore import RestoredFact, facts_of, restore_batches
from graphmem.lifecycle.export import ExportRecord


def _fact(id_: str, content: str | None, links: list[dict[str, object]]) -> ExportRecord:
    return ExportRecord.model_validate({"kind": "fact", "id": id_, "links": links, "properties": {
        "id": id_, "kind": "profile", "owner": "ana", "subject": "ana", "type": "city",
        "content": content, "cardinality": "single", "deleted": content is None,
        "valid_from": "2024-06-01T00:00:00Z", "valid_to": None,
        "recorded_at": "2026-01-02T03:04:05.123456Z", "invalidated_at": None}})


def test_a_fact_version_keeps_what_was_recorded() -> None:
    links = [
        {"type": "SUPPORTED_BY", "direction": "out", "kind": "message", "id": "m1",
         "properties": {"at": "2026-01-02T03:04:05Z", "batch": "b"}},
        {"type": "SUPPORTED_BY", "direction": "out", "kind": "episode", "id": "e1"},
        {"type": "SUPPORTED_BY", "direction": "out", "kind": "fact", "id": "f0"},
        {"type": "SUPERSEDES", "direction": "out", "kind": "fact", "id": "f0", "properties": {
            "reason": "moved", "source": "m1", "at": "2026-01-02T03:04:05Z",
            "closed_valid_to": "2024-06-01T00:00:00Z"}}]
    records = [_fact("f1", "Porto  Centre", links),
               ExportRecord(kind="message", id="m1", properties={"id": "m1"})]
    [f] = facts_of(records)
    assert (f.id, f.kind) == ("f1", "profile")
    assert f.props["recorded_at"] == datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert f.props["valid_from"] == datetime(2024, 6, 1, tzinfo=UTC)
    assert f.props["content_norm"] == "porto centre" and "kind" not in f.props
    assert f.search_text == "ana city: Porto  Centre"
    assert [s["id"] for s in f.sources] == ["m1", "f0"]  # the episode is formed again
    assert f.sources[0]["props"]["at"] == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    [sup] = f.supersedes
    assert sup["id"] == "f0" and sup["props"]["reason"] == "moved"
    assert sup["props"]["closed_valid_to"] == datetime(2024, 6, 1, tzinfo=UTC)


def test_a_deleted_value_has_no_search_text() -> None:
    [f] = facts_of([_fact("f2", None, [])])
    assert f.search_text is None and f.props["content_norm"] is None


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("xy")), max_size=40),
       st.integers(1, 7))
def test_batches_hold_whole_chains(keys: list[tuple[str, str]], size: int) -> None:
    facts = [RestoredFact(id=f"f{i}", kind="observation",
                          props={"owner": "o", "subject": s, "type": t})
             for i, (s, t) in enumerate(keys)]
    batches = restore_batches(facts, size)
    assert sorted(f.id for b in batches for f in b) == sorted(f.id for f in facts)
    where = {(f.props["subject"], f.props["type"]): n for n, b in enumerate(batches) for f in b}
    for n, b in enumerate(batches):
        assert all(where[(f.props["subject"], f.props["type"])] == n for f in b)
        chains = {(f.props["subject"], f.props["type"]) for f in b}
        assert len(b) <= size or len(chains) == 1  # only a long chain goes over, alone
