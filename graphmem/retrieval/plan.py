"""A search request and its preset, resolved once into a `Plan`: which units and recall lists,
the budgets, expansion and time handling. Pure; everything downstream reads the plan only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from graphmem.messages import metadata
from graphmem.messages.metadata import Condition
from graphmem.models import Method, SearchRequest, Units
from graphmem.retrieval.fulltext import lucene_escape
from graphmem.retrieval.graph import GraphWalk
from graphmem.retrieval.rerank import Ranker, for_lists
from graphmem.retrieval.settings import RetrievalSettings

TimeHint = Literal["boost", "restrict", "off"]
EXPANDING: frozenset[Method] = frozenset({"rrf_expand", "rrf_windows", "iterative", "graph"})
"""Methods that expand hits along NEXT (``iterative`` runs rounds of its base method, one of
these)."""


def window_list(size: int, index: str) -> str:
    """The name of a window recall list, e.g. ``window3_vector``."""
    return f"window{size}_{index}"


def window_size(list_name: str) -> int | None:
    """The window size a recall list searches (``window3_vector`` -> 3); None for a turn list."""
    if not list_name.startswith("window"):
        return None
    return int(list_name.removeprefix("window").split("_")[0])


@dataclass(frozen=True)
class Plan:
    """How one search runs. Lists are named by what they search: ``vector`` (sentence units),
    ``fulltext`` (messages), ``sparse`` (messages' learned-sparse word pieces, with a sparse
    model), ``window<size>_<index>`` (turn windows); for episodes and
    observations ``vector`` and ``fulltext`` are that unit's own indexes."""

    query: str
    owner: str
    method: Method
    units: Units
    lists: tuple[str, ...]
    """The message recall lists, in fusion order."""
    unit_lists: tuple[str, ...]
    """The recall lists of episodes and observations."""
    embed: bool
    """Whether the query is embedded (some list is a vector list)."""
    fulltext: str
    """The escaped Lucene query; "" when no fulltext list runs (or the text has no word)."""
    k: int
    candidates: int
    """Hits per message recall list."""
    unit_candidates: int
    """Hits per episode or observation recall list."""
    overfetch: int
    one_round_trip: bool
    """``vector`` and ``fulltext`` in one query (`RetrievalSettings.one_round_trip`)."""
    budget: int | None
    """Messages to return after expansion; None: the first k nuclei, each with its window."""
    expand: tuple[int, int] | None
    """(before, after) along NEXT around each nucleus; None: no expansion."""
    decay: float
    """A neighbour earns its nucleus's score x decay^distance: the ranker's (`Ranker.decay`) when
    one re-ranks, else the preset's ``neighbour_decay``."""
    rrf_k: int
    time_hint: TimeHint
    now: datetime
    """The instant the query's time expressions and the facts' validity are resolved against."""
    session_prior: bool
    session_depth: int
    window_split: bool
    """Window lists weigh 1/size in the fusion (see `search.weights`)."""
    window_matched_only: bool
    """Windows credit only the turns the turn lists found."""
    session_id: str | None
    time_from: datetime | None
    time_to: datetime | None
    normalise_time: bool
    sparse_weight: float = 1.0
    """The weight of the ``sparse`` list in the fusion (when it runs)."""
    graph: GraphWalk | None = None
    """Method ``graph``: the personalised PageRank list joins the fusion (see `graph.rank`)."""
    metadata: Condition | None = None
    """Only messages with this metadata (`graphmem.messages.metadata.condition`, one clause per
    key): every recall list, derived list and neighbour is held to it."""
    ranker: Ranker | None = None
    """The learned re-ranking of the fused candidates before expansion (`rerank`); None: the
    fused order stands (no ranker for these lists, see `reranked_lists`; no expansion; or
    ``rerank`` off)."""
    as_of: datetime | None = None
    """The request's ``as_of``: no unit that happened after it is recalled or added around a
    hit (None: no such limit; ``now`` still resolves the query's times)."""
    order: Literal["relevance", "time"] = "relevance"
    """The order of the reply's hits."""

    @property
    def messages(self) -> bool:
        return self.units in ("messages", "both")

    @property
    def observations(self) -> bool:
        return self.units in ("observations", "both")


def _indexes(method: Method, sparse: bool) -> tuple[str, ...]:
    if method in ("vector", "fulltext"):
        return (method,)
    return ("vector", "fulltext", "sparse") if sparse else ("vector", "fulltext")


def graph_walk(rs: RetrievalSettings) -> GraphWalk:
    """Method ``graph``: how its PageRank list is made (``rrf_expand`` plus that list)."""
    return GraphWalk(weight=rs.graph_weight, alpha=rs.graph_alpha, seeds=rs.graph_seeds,
                     query_share=rs.graph_query_share, max_degree=rs.graph_max_degree)


def resolve(req: SearchRequest, rs: RetrievalSettings, now: datetime) -> Plan:
    """The plan of ``req`` under the settings ``rs``; ``now`` stands in for a missing
    ``as_of``."""
    budget = req.max_messages if req.max_messages is not None else rs.max_messages
    indexes = _indexes(req.method, rs.sparse)
    windows = rs.window_sizes if req.method == "rrf_windows" else ()
    lists = (*indexes, *(window_list(s, i) for s in windows for i in rs.window_indexes
                         if i in indexes))
    fulltext = lucene_escape(req.query) if "fulltext" in indexes else ""
    expand = None
    if req.method in EXPANDING:
        expand = ((req.expand.before, req.expand.after) if req.expand is not None
                  else (rs.expand_before, rs.expand_after))
    single = req.method in ("fulltext", "vector")  # a single-index method is that index alone
    graph = graph_walk(rs) if req.method == "graph" or (
        rs.graph_list and req.method in EXPANDING) else None
    ranker = (for_lists(reranked_lists(lists, graph), rs.embedding)
              if rs.rerank and expand is not None else None)
    decay = ranker.decay_or(rs.neighbour_decay) if ranker is not None else rs.neighbour_decay
    return Plan(
        query=req.query, owner=req.owner, method=req.method, units=req.units, lists=lists,
        unit_lists=tuple(i for i in indexes if i == "vector" or (i == "fulltext" and fulltext)),
        embed="vector" in indexes, fulltext=fulltext, k=req.k,
        # for k nuclei, 3k (at least 20) per list: ranks beyond that barely move the top k
        candidates=rs.candidates if budget is not None else min(rs.candidates,
                                                                  max(3 * req.k, 20)),
        unit_candidates=rs.candidates, overfetch=rs.overfetch,
        one_round_trip=rs.one_round_trip, budget=budget, expand=expand,
        decay=decay, rrf_k=rs.rrf_k, time_hint="off" if single else req.time_hint,
        now=req.as_of or now, session_prior=rs.session_prior and req.method == "rrf_windows",
        session_depth=rs.session_depth, window_split=rs.window_split,
        window_matched_only=rs.window_matched_only, session_id=req.session_id,
        time_from=req.time_from, time_to=req.time_to, normalise_time=rs.normalise_time,
        sparse_weight=rs.sparse_weight, graph=graph,
        ranker=ranker, metadata=metadata.condition(req.metadata), as_of=req.as_of,
        order=req.order,
    )


def reranked_lists(lists: tuple[str, ...], graph: GraphWalk | None) -> tuple[str, ...]:
    """The lists a learned ranker reads for a plan: its recall lists, and ``graph`` when the
    PageRank list joins the fusion (a ranker is trained for one such set)."""
    return (*lists, "graph") if graph is not None else lists
