"""A search request and its recipe, resolved once into a `Plan`: which units and recall lists,
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
from graphmem.retrieval.recipes import Recipe
from graphmem.retrieval.rerank import Ranker, named

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
    """``vector`` and ``fulltext`` in one query (`Lists.one_round_trip`)."""
    budget: int | None
    """Messages to return after expansion; None: the first k nuclei, each with its window."""
    expand: tuple[int, int] | None
    """(before, after) along NEXT around each nucleus; None: no expansion."""
    decay: float
    """A neighbour earns its nucleus's score x decay^distance: the ranker's (`Ranker.decay`) when
    one re-ranks, else the recipe's ``neighbour_decay``."""
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
    """The learned re-ranking of the fused candidates before expansion (`rerank`): the ranker
    the recipe names (`Rerank.ranker`); None: the fused order stands (no expansion, re-ranking
    off, the recipe names none, or the one it names is missing: see ``no_ranker``)."""
    no_ranker: str | None = None
    """Why the ranker the recipe names does not re-rank (not shipped under the embedding, or
    trained on other lists, see `rerank.named`; logged once); None when it does or none is
    named."""
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


def graph_walk(recipe: Recipe) -> GraphWalk:
    """Method ``graph``: how its PageRank list is made (``rrf_expand`` plus that list)."""
    w = recipe.walk
    return GraphWalk(weight=w.graph_weight, alpha=w.graph_alpha, seeds=w.graph_seeds,
                     query_share=w.graph_query_share, max_degree=w.graph_max_degree)


def resolve(req: SearchRequest, recipe: Recipe, now: datetime) -> Plan:
    """The plan of ``req`` under ``recipe`` (the recipe of the request's method); ``now`` stands
    in for a missing ``as_of``."""
    if recipe.method != req.method:
        raise ValueError(f"recipe {recipe.name} is not for method {req.method!r}")
    ls, fu, ex, rr = recipe.lists, recipe.fusion, recipe.expansion, recipe.reranking
    budget = req.max_messages if req.max_messages is not None else ex.max_messages
    indexes = _indexes(req.method, ls.sparse)
    windows = ls.window_sizes if req.method == "rrf_windows" else ()
    lists = (*indexes, *(window_list(s, i) for s in windows for i in ls.window_indexes
                         if i in indexes))
    fulltext = lucene_escape(req.query) if "fulltext" in indexes else ""
    expand = None
    if req.method in EXPANDING:
        expand = ((req.expand.before, req.expand.after) if req.expand is not None
                  else (ex.expand_before, ex.expand_after))
    single = req.method in ("fulltext", "vector")  # a single-index method is that index alone
    graph = graph_walk(recipe) if req.method == "graph" or (
        recipe.walk.graph_list and req.method in EXPANDING) else None
    ranker, no_ranker = None, None
    if rr.rerank and expand is not None and rr.ranker is not None:
        ranker, no_ranker = named(rr.ranker, reranked_lists(lists, graph), rr.embedding)
    decay = (ranker.decay_or(ex.neighbour_decay) if ranker is not None
             else ex.neighbour_decay)
    return Plan(
        query=req.query, owner=req.owner, method=req.method, units=req.units, lists=lists,
        unit_lists=tuple(i for i in indexes if i == "vector" or (i == "fulltext" and fulltext)),
        embed="vector" in indexes, fulltext=fulltext, k=req.k,
        # for k nuclei, 3k (at least 20) per list: ranks beyond that barely move the top k
        candidates=ls.candidates if budget is not None else min(ls.candidates,
                                                                  max(3 * req.k, 20)),
        unit_candidates=ls.candidates, overfetch=ls.overfetch,
        one_round_trip=ls.one_round_trip, budget=budget, expand=expand,
        decay=decay, rrf_k=fu.rrf_k, time_hint="off" if single else req.time_hint,
        now=req.as_of or now, session_prior=fu.session_prior and req.method == "rrf_windows",
        session_depth=fu.session_depth, window_split=fu.window_split,
        window_matched_only=ls.window_matched_only, session_id=req.session_id,
        time_from=req.time_from, time_to=req.time_to, normalise_time=ex.normalise_time,
        sparse_weight=fu.sparse_weight, graph=graph,
        ranker=ranker, no_ranker=no_ranker, metadata=metadata.condition(req.metadata),
        as_of=req.as_of, order=req.order,
    )


def reranked_lists(lists: tuple[str, ...], graph: GraphWalk | None) -> tuple[str, ...]:
    """The lists a learned ranker reads for a plan: its recall lists, and ``graph`` when the
    PageRank list joins the fusion (a ranker is trained for one such set)."""
    return (*lists, "graph") if graph is not None else lists
