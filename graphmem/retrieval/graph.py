"""The ``graph`` recall list: a personalised PageRank over the neighbourhood of a search's best
candidates. Pure (networkx, no database): the store reads the neighbourhood
(`graphmem.store.entities.EntityStore.neighbourhood`), this module builds the graph and ranks
its messages.

The graph holds the candidates, their ``NEXT`` neighbours, the entities they and the query
mention, other messages mentioning those entities, and the episodes and facts of all of them.
Entities here include the hidden walk links (`graphmem.entities.extract.links`: the lemmas of
nouns and verbs, so "my pottery class" meets "the class" and "painted" meets "paint"), read
after the other entities when the neighbourhood's entity budget is short.
The walk restarts at the candidates (in proportion to their fused scores) and at the query's own
entities, so a message that shares a rare entity with several good candidates, or with the
query, ranks high even when neither index found it (a multi-hop question's second hop).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

Node = tuple[str, str]
"""(kind, key): ``("m", message id)``, ``("e", entity name)``, ``("p", episode id)``,
``("f", fact id)``, ``("s", session id)``."""


@dataclass(frozen=True)
class GraphWalk:
    """How the ``graph`` list is made (from a recipe's `Walk` stage, its ``graph_*`` fields)."""

    weight: float = 1.0
    """The PPR list's weight in the fusion (the recall lists weigh 1)."""
    alpha: float = 0.5
    """PageRank's damping: the chance of following an edge rather than restarting."""
    seeds: int = 5
    """The best fused candidates whose neighbourhood is read and where the walk restarts."""
    query_share: float = 0.3
    """The share of restarts at the query's entities (when the graph holds any)."""
    max_degree: int = 30
    """Entities mentioned by more messages are left out (speakers, everyday words)."""
    max_entities: int = 40
    per_entity: int = 10
    depth: int = 50
    """Messages in the PPR list."""
    session_weight: float = 0.0
    """Weight of the message-session edges (0: sessions are not in the graph)."""


@dataclass(frozen=True)
class Neighbourhood:
    """What `neighbourhood.cypher` reads (its columns)."""

    messages: Sequence[Mapping[str, Any]] = ()
    next: Sequence[Sequence[str]] = ()
    entities: Sequence[Mapping[str, Any]] = ()
    mentions: Sequence[Sequence[str]] = ()
    episodes: Sequence[Sequence[str]] = ()
    facts: Sequence[Sequence[str]] = ()

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Neighbourhood:
        return cls(row.get("messages") or (), row.get("next") or (),
                   row.get("entities") or (), row.get("mentions") or (),
                   row.get("episodes") or (), row.get("facts") or ())


def mention_weight(degree: int) -> float:
    """An entity edge weighs less the more messages mention the entity (an inverse document
    frequency): 1 for an entity of one mention, 1/log2(degree + 1) beyond."""
    return 1.0 / math.log2(max(degree, 1) + 1)


def build(nb: Neighbourhood, session_weight: float = 0.0) -> nx.Graph:
    """The undirected, weighted graph of a neighbourhood."""
    g = nx.Graph()
    for m in nb.messages:
        g.add_node(("m", m["id"]))
        if session_weight > 0 and m.get("session_id"):
            g.add_edge(("m", m["id"]), ("s", m["session_id"]), weight=session_weight)
    for a, b in nb.next:
        g.add_edge(("m", a), ("m", b), weight=1.0)
    degree = {e["name"]: int(e.get("degree") or 1) for e in nb.entities}
    for message, name in nb.mentions:
        if name in degree:
            g.add_edge(("m", message), ("e", name), weight=mention_weight(degree[name]))
    for message, episode in nb.episodes:
        g.add_edge(("m", message), ("p", episode), weight=1.0)
    for message, fact in nb.facts:
        g.add_edge(("m", message), ("f", fact), weight=1.0)
    return g


def restarts(seeds: Sequence[tuple[str, float]], query_entities: Sequence[str],
             g: nx.Graph, query_share: float) -> dict[Node, float]:
    """Where the walk restarts: the seed messages in proportion to their scores, and the
    query's entities present in the graph sharing ``query_share`` evenly."""
    present = [("e", n) for n in dict.fromkeys(query_entities) if ("e", n) in g]
    total = math.fsum(s for i, s in seeds if ("m", i) in g and s > 0)
    share = query_share if present and total > 0 else (1.0 if present else 0.0)
    out: dict[Node, float] = {}
    if total > 0:
        for i, s in seeds:
            if ("m", i) in g and s > 0:
                out[("m", i)] = out.get(("m", i), 0.0) + (1 - share) * s / total
    for node in present:
        out[node] = share / len(present)
    return out


def rank(nb: Neighbourhood, seeds: Sequence[tuple[str, float]], query_entities: Sequence[str],
         walk: GraphWalk) -> list[tuple[str, int, float]]:
    """The messages of the neighbourhood ranked by personalised PageRank, best first, as
    (id, rank, PageRank) triples (at most ``walk.depth``; ties by id). Empty when nothing seeds
    the walk."""
    g = build(nb, walk.session_weight)
    personal = restarts(seeds, query_entities, g, walk.query_share)
    if not personal:
        return []
    scores: dict[Node, float] = nx.pagerank(g, alpha=walk.alpha, personalization=personal,
                                            weight="weight", max_iter=200, tol=1e-8)
    messages = sorted((n for n in scores if n[0] == "m"), key=lambda n: (-scores[n], n[1]))
    return [(n[1], r, float(scores[n])) for r, n in enumerate(messages[: walk.depth], start=1)]
