"""Metadata pairs and filters: what a filter matches is what a reader of the JSON would say it
matches (every key, one of its values; 1 and 1.0 alike, true apart from 1), whatever the keys
and values hold."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphmem.cli.memory import metadata_filter
from graphmem.messages import metadata
from graphmem.models import ContextRequest, SearchRequest
from graphmem.retrieval.search import matching_windows
from graphmem.store import Windows

KEYS = st.sampled_from(["a", "b", "c", "[\"a\",1]", "ключ", "x,y", ""]).filter(bool)
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                   st.integers(-3, 3).map(float), st.sampled_from([0.5, -2.25]),
                   st.sampled_from(["", "1", "true", "slack", "a\"b", "é"]))


def _same(x: Any, y: Any) -> bool:
    """Equal as JSON values: numbers by value, booleans and null apart from numbers."""
    if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
        return type(x) is type(y) and x == y
    if isinstance(x, int | float) and isinstance(y, int | float):
        return math.isclose(x, y, rel_tol=0, abs_tol=0)
    return type(x) is type(y) and x == y


@given(st.dictionaries(KEYS, VALUES, max_size=4),
       st.dictionaries(KEYS, st.one_of(VALUES, st.lists(VALUES, min_size=1, max_size=3)),
                       min_size=1, max_size=3))
def test_a_filter_matches_what_the_json_says(stored: dict[str, Any],
                                             wanted: dict[str, Any]) -> None:
    expected = all(k in stored and any(_same(stored[k], v) for v in
                                       (vs if isinstance(vs, list) else [vs]))
                   for k, vs in wanted.items())
    assert metadata.matches(metadata.pairs(stored), metadata.condition(wanted)) == expected


@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_pairs_decode_to_the_metadata(stored: dict[str, Any]) -> None:
    back = dict(json.loads(p) for p in metadata.pairs(stored))
    assert back.keys() == stored.keys()
    assert all(_same(back[k], v) for k, v in stored.items())


SOME = st.lists(VALUES, min_size=1, max_size=3)
OPS = st.one_of(
    st.fixed_dictionaries({}, optional={"gt": st.integers(-3, 3),
                                        "lte": st.sampled_from([-1, 0.5, 2])}),
    st.fixed_dictionaries({}, optional={"gte": st.sampled_from([-2.5, 0, 1]),
                                        "lt": st.integers(-3, 3)}),
    st.fixed_dictionaries({}, optional={"ne": VALUES, "nin": SOME, "exists": st.booleans()}),
    st.fixed_dictionaries({}, optional={"eq": VALUES, "exists": st.booleans()}),
    st.fixed_dictionaries({"in": st.lists(VALUES, min_size=1, max_size=3)},
                          optional={"gte": st.integers(-3, 3)}),
).filter(bool)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _passes(stored: dict[str, Any], key: str, ops: dict[str, Any]) -> bool:
    """What a reader of the JSON would say an operator object asks of one key."""
    there, v = key in stored, stored.get(key)
    checks = {
        "eq": lambda x: there and _same(v, x),
        "in": lambda xs: there and any(_same(v, x) for x in xs),
        "ne": lambda x: not (there and _same(v, x)),
        "nin": lambda xs: not (there and any(_same(v, x) for x in xs)),
        "exists": lambda x: there == x,
        "gt": lambda x: there and _number(v) and v > x,
        "gte": lambda x: there and _number(v) and v >= x,
        "lt": lambda x: there and _number(v) and v < x,
        "lte": lambda x: there and _number(v) and v <= x,
    }
    return all(checks[op](x) for op, x in ops.items())


@given(st.dictionaries(KEYS, VALUES, max_size=4),
       st.dictionaries(KEYS, OPS, min_size=1, max_size=3))
def test_operators_match_what_the_json_says(stored: dict[str, Any],
                                            wanted: dict[str, Any]) -> None:
    SearchRequest(query="q", owner="o", metadata=wanted)  # a filter the API accepts
    expected = all(_passes(stored, k, ops) for k, ops in wanted.items())
    assert metadata.matches(metadata.pairs(stored), metadata.condition(wanted)) == expected


def test_ranges_compare_numbers_only_and_bounds_hold() -> None:
    def ok(stored: dict[str, Any], ops: dict[str, Any]) -> bool:
        return metadata.matches(metadata.pairs(stored), metadata.condition({"n": ops}))

    assert ok({"n": 2}, {"gt": 1.9999999}) and not ok({"n": 2}, {"gt": 2})
    assert ok({"n": 2.0}, {"gte": 2, "lte": 2}) and not ok({"n": 2}, {"lt": 2})
    assert ok({"n": 1e20}, {"gt": 1e19}) and ok({"n": -0.5}, {"lt": 0})
    assert not ok({"n": "5"}, {"gt": 1}) and not ok({"n": True}, {"gte": 0})
    assert not ok({"n": None}, {"lte": 0}) and not ok({}, {"gte": 0})
    assert ok({}, {"ne": 1}) and ok({"m": 1}, {"exists": False})
    assert ok({"n": None}, {"exists": True})


def test_the_predicate_is_the_same_in_every_filtered_query() -> None:
    """Each query that takes $metadata checks it with `metadata.PREDICATE` (for the node that
    carries the pairs), the check `metadata.matches` mirrors."""
    from graphmem import cypher

    found = 0
    for folder in ("queries", "audit"):
        for path in sorted((cypher.CYPHER_DIR / folder).rglob("*.cypher")):
            text = path.read_text()
            body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
            if "$metadata" not in body:
                continue
            flat = " ".join(body.split())
            uses = [var for var in ("h.s", "h.m", "s", "m")
                    if " ".join(metadata.PREDICATE.replace("X.", var + ".").split()) in flat]
            assert uses, path.name
            assert flat.count("$metadata") == 2 * flat.count(
                "($metadata IS NULL OR all(c IN $metadata WHERE"), path.name
            found += 1
    assert found == 10


def test_no_filter_matches_everything() -> None:
    assert metadata.condition(None) is None and metadata.condition({}) is None
    assert metadata.matches(None, None) and metadata.matches([], None)
    assert not metadata.matches(None, metadata.condition({"a": 1}))


def test_the_request_accepts_scalars_and_lists_and_names_what_is_wrong() -> None:
    req = SearchRequest(query="q", owner="o", metadata={"a": [1, None, "x", True], "b": 2.5})
    assert req.metadata == {"a": [1, None, "x", True], "b": 2.5}
    for bad in ({"a": {"x": 1}}, {"a": []}, {"a": [1, [2]]}, {"a": math.inf},
                {"a": list(range(101))}, {"a": {}}, {"a": {"gte": "2024"}},
                {"a": {"gt": True}}, {"a": {"lt": math.nan}}, {"a": {"in": 1}},
                {"a": {"nin": []}}, {"a": {"eq": [1]}}, {"a": {"exists": "yes"}},
                {"a": {"gt": 1, "gte": 1}}, {"a": {"eq": 1, "in": [1]}}):
        with pytest.raises(ValidationError) as info:
            SearchRequest(query="q", owner="o", metadata=bad)
        assert info.value.errors()[0]["loc"] == ("metadata", "a")
    for bad in ({}, {f"k{i}": 1 for i in range(17)}, {"": 1}):
        with pytest.raises(ValidationError) as info:
            SearchRequest(query="q", owner="o", metadata=bad)
        assert info.value.errors()[0]["loc"][0] == "metadata"
    with pytest.raises(ValidationError, match="messages only"):
        SearchRequest(query="q", owner="o", metadata={"a": 1}, units="episodes")


def test_context_with_a_filter_asks_for_messages() -> None:
    assert ContextRequest(query="q", owner="o", metadata={"a": 1}).units == ["message"]
    assert ContextRequest(query="q", owner="o").units == ["message", "episode", "fact"]
    both = ContextRequest(query="q", owner="o", metadata={"a": 1}, units=["message", "skill"])
    assert both.units == ["message", "skill"]
    with pytest.raises(ValidationError) as info:
        ContextRequest(query="q", owner="o", metadata={"a": 1}, units=["message", "fact"])
    assert info.value.errors()[0]["loc"] == ("metadata",)


def test_neighbours_without_the_metadata_leave_the_window() -> None:
    cond = metadata.condition({"channel": "slack"})
    slack, mail = metadata.pairs({"channel": "slack"}), metadata.pairs({"channel": "email"})
    got = Windows(windows={"b": ["a", "b", "c", "d"]}, links={("a", "b"), ("b", "c")},
                  records={"a": {"metadata_pairs": slack}, "b": {"metadata_pairs": slack},
                           "c": {"metadata_pairs": mail}, "d": {"metadata_pairs": slack}})
    kept = matching_windows(got, cond)
    assert kept.windows == {"b": ["a", "b", "d"]} and set(kept.records) == {"a", "b", "d"}
    assert matching_windows(got, None) is got


def test_the_cli_reads_key_value_options() -> None:
    assert metadata_filter(["channel=slack", "priority=2", "priority=3", "ok=true",
                            "note={x}", "empty="]) == {
        "channel": "slack", "priority": [2, 3], "ok": True, "note": "{x}", "empty": ""}
    assert metadata_filter(["score>=0.5", "score<2", "n>1", "m<=3", "src!=gmail", "x=a=b"]) == {
        "score": {"gte": 0.5, "lt": 2}, "n": {"gt": 1}, "m": {"lte": 3},
        "src": {"ne": "gmail"}, "x": "a=b"}
    for bad in (["novalue"], ["=1"], ["n=1", "n>2"]):
        with pytest.raises(typer.BadParameter):
            metadata_filter(bad)


def test_tokens_name_tenant_owner_and_pair_and_query_every_key() -> None:
    a = metadata.pairs({"channel": "slack", "n": 1.0})
    assert metadata.tokens("t", "o", []) is None
    words = (metadata.tokens("t", "o", a) or "").split()
    assert len(words) == 2 and all(len(w) == 24 and w.isalnum() for w in words)
    assert metadata.tokens("t", "p", a) != metadata.tokens("t", "o", a)
    assert metadata.tokens("u", "o", a) != metadata.tokens("t", "o", a)
    cond = metadata.condition({"channel": ["slack", "sms"], "n": 1, "score": {"gte": 2}})
    assert cond is not None
    slack, sms, one = (metadata.token("t", "o", metadata.pair(k, v))
                       for k, v in (("channel", "slack"), ("channel", "sms"), ("n", 1)))
    clauses = [c.param() for c in cond]
    assert metadata.token_query("t", "o", clauses) == (  # the range cannot use the index
        f"metadata_tokens:({slack} OR {sms}) AND metadata_tokens:({one})")
    assert one in words and slack in words
    only_ranges = metadata.condition({"score": {"gt": 1}, "spam": {"exists": False}})
    assert only_ranges is not None
    assert metadata.token_query("t", "o", [c.param() for c in only_ranges]) is None
