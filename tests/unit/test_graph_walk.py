"""The ``graph`` recall list (graphmem.retrieval.graph): the neighbourhood as a weighted graph,
and personalised PageRank over it. Pure, no database."""

from __future__ import annotations

import pytest

from graphmem.retrieval.graph import (
    GraphWalk,
    Neighbourhood,
    build,
    mention_weight,
    rank,
    restarts,
)


def hood(**extra: object) -> Neighbourhood:
    """Seeds s1, s2 (one session, consecutive); x mentions the rare entity both seeds mention;
    y only the common one; z is far away (a NEXT neighbour of x)."""
    row = {
        "messages": [{"id": i, "session_id": "S" if i.startswith("s") else "T"}
                     for i in ("s1", "s2", "x", "y", "z")],
        "next": [["s1", "s2"], ["x", "z"]],
        "entities": [{"name": "pottery", "degree": 3, "query": False},
                     {"name": "people", "degree": 30, "query": False}],
        "mentions": [["s1", "pottery"], ["s2", "pottery"], ["x", "pottery"],
                     ["s1", "people"], ["y", "people"], ["z", "melanie"]],
        "episodes": [], "facts": [],
        **extra,
    }
    return Neighbourhood.of(row)


def test_build_makes_nodes_and_weighted_edges() -> None:
    g = build(hood())
    assert ("m", "x") in g and ("e", "pottery") in g
    assert g[("m", "s1")][("m", "s2")]["weight"] == 1.0
    assert g[("m", "x")][("e", "pottery")]["weight"] == mention_weight(3)
    assert ("e", "melanie") not in g  # not among the chosen entities
    assert not any(n[0] == "s" for n in g)
    assert g.has_edge(("m", "s1"), ("s", "S")) is False
    assert build(hood(), session_weight=0.5).has_edge(("m", "s1"), ("s", "S"))


def test_mention_weight_falls_with_degree() -> None:
    assert mention_weight(1) == 1.0
    assert mention_weight(3) > mention_weight(30) > 0


def test_restarts_split_between_seeds_and_query_entities() -> None:
    g = build(hood())
    got = restarts([("s1", 3.0), ("s2", 1.0), ("gone", 5.0)], ["pottery", "absent"], g, 0.2)
    assert got == pytest.approx({("m", "s1"): 0.6, ("m", "s2"): 0.2, ("e", "pottery"): 0.2})
    assert restarts([("s1", 1.0)], [], g, 0.2) == {("m", "s1"): 1.0}
    assert restarts([], ["pottery"], g, 0.2) == {("e", "pottery"): 1.0}
    assert restarts([], [], g, 0.2) == {}


def test_a_message_sharing_a_rare_entity_with_the_seeds_outranks_others() -> None:
    ranked = rank(hood(), [("s1", 0.03), ("s2", 0.02)], [], GraphWalk())
    ids = [i for i, _, _ in ranked]
    assert ids[:2] == ["s1", "s2"]
    assert ids.index("x") < ids.index("y")
    assert [r for _, r, _ in ranked] == list(range(1, len(ranked) + 1))


def test_query_entities_pull_their_messages_up() -> None:
    walk = GraphWalk(query_share=0.9)
    without = [i for i, _, _ in rank(hood(), [("y", 0.03)], [], walk)]
    with_query = [i for i, _, _ in rank(hood(), [("y", 0.03)], ["pottery"], walk)]
    assert with_query.index("x") < without.index("x")


def test_depth_bounds_the_list_and_no_seed_gives_nothing() -> None:
    assert len(rank(hood(), [("s1", 1.0)], [], GraphWalk(depth=2))) == 2
    assert rank(hood(), [], [], GraphWalk()) == []
    assert rank(Neighbourhood(), [("s1", 1.0)], ["pottery"], GraphWalk()) == []


def test_ranking_is_deterministic() -> None:
    seeds = [("s1", 0.03), ("s2", 0.02)]
    assert rank(hood(), seeds, ["pottery"], GraphWalk()) == rank(hood(), seeds, ["pottery"],
                                                                GraphWalk())


def test_each_message_comes_with_its_pagerank_falling_with_the_rank() -> None:
    got = rank(hood(), [("s1", 0.03), ("s2", 0.02)], ["pottery"], GraphWalk())
    values = [v for _, _, v in got]
    assert values == sorted(values, reverse=True) and all(0 < v < 1 for v in values)
