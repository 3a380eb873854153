"""Retrieval recipes: how one search runs, as data. A `Recipe` is one method's configuration of
every stage of the pipeline (`graphmem.retrieval.search`), one frozen value per stage:

- `Lists`: which recall lists run and how deep;
- `Fusion`: how reciprocal rank fusion weighs them, and the session prior;
- `Expansion`: the turns around each hit, the message budget, and how the context shows time;
- `Walk`: the personalised PageRank list over the entity graph;
- `Rerank`: the learned re-ranking before expansion, and which ranker it uses;
- `Iterative`: the rounds of method ``iterative``.

Every method (`graphmem.models.Method`) has one recipe per preset (`PRESETS`: ``default``,
``fast``, ``wide``, ``deep``), all in `RECIPES`; `recipe` finds the one a request asks for by
its ``method`` and ``preset``. Derive variants with `Recipe.with_`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, get_args

from graphmem.errors import InvalidInput
from graphmem.models import Method

DEFAULT_EMBEDDING = "minilm/sentence"
"""The default embedding model and unit (``<embedder>/<unit>``, as `rerank.embedder_key` writes
them): the one a ranker file names when it names none."""
METHODS: tuple[Method, ...] = get_args(Method)


@dataclass(frozen=True)
class Lists:
    """The recall lists and their depth."""

    candidates: int = 50
    """How many hits each recall list (vector, fulltext) contributes before fusion."""
    overfetch: int = 8
    """ANN/fulltext results fetched per wanted hit, before the tenant/owner filter drops others'."""
    one_round_trip: bool = True
    """The message lists ``vector`` and ``fulltext`` in one query, once the query is embedded
    (the same hits); False: the fulltext query runs while the query is being embedded, then the
    vector query (less wait on an idle server, two round trips)."""
    sparse: bool = False
    """The hybrid methods add the learned-sparse list (``sparse``) to the message lists: set by
    `Recipe.served` when a sparse model is configured (``GRAPHMEM_SPARSE``)."""
    window_sizes: tuple[int, ...] = (3, 5)
    """Method ``rrf_windows``: the sizes of turn windows searched (each a recall list per index;
    windows of 3 and 5 turns are built by formation)."""
    window_indexes: tuple[str, ...] = ("vector", "fulltext")
    """Method ``rrf_windows``: the indexes searched for each window size."""
    window_matched_only: bool = False
    """Method ``rrf_windows``: a window credits only its turns that the turn lists found too (it
    re-ranks them and adds no turn of its own)."""


@dataclass(frozen=True)
class Fusion:
    """Reciprocal rank fusion of the lists, and the lists derived from its first pass."""

    rrf_k: int = 60
    """The constant of reciprocal rank fusion: score = sum over lists of 1/(rrf_k + rank)."""
    window_split: bool = True
    """Method ``rrf_windows``: a window's vote is shared by the turns it covers, each window list
    weighing 1/size in the fusion (the turn lists weigh 1); False: every window list weighs 1."""
    sparse_weight: float = 1.0
    """The weight of the learned-sparse list in the fusion."""
    session_prior: bool = False
    """Method ``rrf_windows``: add the session prior list (candidates ranked by their session;
    off by default: with split windows it lowered recall on LoCoMo dev)."""
    session_depth: int = 1
    """A session scores the sum of the fused scores of its ``session_depth`` best candidates."""


@dataclass(frozen=True)
class Expansion:
    """The turns around each hit along NEXT, the budget, and the context's times."""

    expand_before: int = 1
    expand_after: int = 2
    neighbour_decay: float = 0.35
    """A neighbour at distance d earns nucleus score x decay^d (chosen on the LoCoMo dev set, for
    fused scores; a learned ranker's probabilities use its own, `Ranker.decay`)."""
    max_messages: int | None = None
    """Budget of messages returned after expansion; None: every nucleus with its window."""
    normalise_time: bool = True
    """Show relative time expressions resolved in the context: "yesterday [2023-05-07]"."""


@dataclass(frozen=True)
class Walk:
    """The personalised PageRank list (`graphmem.retrieval.graph`)."""

    graph_list: bool = False
    """Every expanding method (``rrf_expand``, ``rrf_windows``, ``iterative``), not only
    ``graph``, adds the personalised PageRank list to its fusion (preset ``deep``)."""
    graph_weight: float = 1.0
    """The weight of the personalised PageRank list in the fusion."""
    graph_alpha: float = 0.5
    """PageRank's damping (the chance of following an edge, not restarting)."""
    graph_seeds: int = 5
    """The best fused candidates whose neighbourhood is walked (restarts)."""
    graph_query_share: float = 0.3
    """The share of restarts at the entities the query names."""
    graph_max_degree: int = 30
    """Entities mentioned by more of the owner's messages are left out."""


@dataclass(frozen=True)
class Rerank:
    """The learned re-ranking of the fused candidates before expansion
    (`graphmem.retrieval.rerank`)."""

    rerank: bool = True
    """Re-rank with the recipe's ``ranker`` (only the expanding methods do)."""
    ranker: str | None = None
    """The shipped ranker of this recipe's recall lists (``rankers/<embedding>/<ranker>.json``;
    with the learned-sparse list, its twin ``<ranker>_sparse``); None: the recipe has none and
    keeps the fused order. A ranker named but not shipped under the embedding, or trained on
    other lists, is logged and the fused order kept (`rerank.named`)."""
    embedding: str = DEFAULT_EMBEDDING
    """The embedding model and unit of the stored vectors (`rerank.embedder_key`): the learned
    re-ranking uses the rankers trained under it (set by `Recipe.served`)."""


@dataclass(frozen=True)
class Iterative:
    """Method ``iterative``: rounds of a one-shot recipe (`rounds`) steered by a decider."""

    iterative_base: str = "rrf_windows"
    """The one-shot method each round's recall runs (``rrf_windows`` or ``rrf_expand``).
    ``rrf_windows`` by default: ``iterative`` is the method asked for its recall, and on LoCoMo
    dev its rounds on ``rrf_expand`` only tied ``rrf_expand``."""
    iterative_graph_list: bool = True
    """Its rounds add the personalised PageRank list (`Walk.graph_list`) to the base method's
    lists, whatever ``graph_list`` says for the one-shot methods (on LoCoMo dev +0.004 to
    +0.006 recall at 10-50 messages over rounds on ``rrf_windows`` alone, for about 15 ms more
    at p50)."""
    iterative_every_question: bool = True
    """Offline decider: follow-up queries for every question, not only for those that ask for
    several things (False). On LoCoMo dev +0.004 to +0.007 at 5-20 messages and multi-hop @20
    0.693 -> 0.707, for about twice the time (p50 85 against 36 ms in one run): ``iterative`` is
    the method asked for its recall; ``rrf_windows`` is the quick one. Preset ``fast`` turns it
    off."""
    iterative_rounds: int = 3
    """R, at most this many decider calls (so at most 1 + (R - 1) x L recalls); 0 makes it the
    base method with the iterative assembly."""
    iterative_queries: int = 3
    """L, at most this many follow-up queries per round."""
    iterative_patience: int = 1
    """Stop after this many rounds in a row without progress (nothing kept, nothing new among
    the first K)."""
    iterative_fallback: int = 5
    """When the decider fails for good, its first f candidates form the core (the result is then
    the base method's ranking)."""
    iterative_core_share: float = 0.5
    """The core (kept evidence, returned first) takes at most this share of the message budget K
    (at least 1)."""
    iterative_follow_up_weight: float = 1.0
    """The scores of a follow-up query's candidates are multiplied by this before they meet the
    question's (a candidate's score is the max over its queries)."""
    iterative_follow_up_depth: int = 10
    """A follow-up query offers at most its first this many candidates (the question offers all
    K)."""
    iterative_max_tokens: int | None = None
    """A token budget of the assembled messages (None: K messages)."""
    iterative_shown: int = 12
    """With an LLM decider: candidates shown to the model per round."""


STAGES: dict[str, type] = {"lists": Lists, "fusion": Fusion, "expansion": Expansion,
                           "walk": Walk, "reranking": Rerank, "iterative": Iterative}
"""The recipe's stages by attribute name."""
FIELDS: dict[str, str] = {f.name: stage for stage, cls in STAGES.items() for f in fields(cls)}
"""Every stage field by name -> its stage (the names are unique across stages)."""

RANKERS: dict[tuple[Method, bool], str] = {
    ("rrf_expand", False): "rrf_expand",
    ("rrf_expand", True): "graph",  # rrf_expand with the PageRank list: method graph's lists
    ("graph", False): "graph",
    ("graph", True): "graph",
    ("rrf_windows", False): "rrf_windows",
    ("rrf_windows", True): "rrf_windows_graph",
    ("iterative", False): "rrf_expand",
    ("iterative", True): "graph",
}
"""The shipped ranker of an expanding method, with or without the PageRank list
(`Walk.graph_list`) in its fusion. ``vector``, ``fulltext`` and ``rrf`` have none (they do not
expand). ``iterative``'s own plan has the lists of ``rrf_expand`` (and names its ranker), but
its rounds re-rank with the ranker their recipe names (`Recipe.rounds`)."""


def ranker_of(method: Method, graph_list: bool) -> str | None:
    """The name of the shipped ranker of ``method`` (`RANKERS`); None if it has none."""
    return RANKERS.get((method, graph_list))


@dataclass(frozen=True)
class Recipe:
    """How one search runs: a method and the configuration of each stage. Immutable: derive
    variants with `with_`."""

    method: Method = "rrf_expand"
    preset: str = "default"
    """The preset it was made from (`PRESETS`), for logs."""
    lists: Lists = field(default_factory=Lists)
    fusion: Fusion = field(default_factory=Fusion)
    expansion: Expansion = field(default_factory=Expansion)
    walk: Walk = field(default_factory=Walk)
    reranking: Rerank = field(default_factory=lambda: Rerank(ranker="rrf_expand"))
    """Names the ranker of ``method`` (`RANKERS`; a variant made by `with_` names its own)."""
    iterative: Iterative = field(default_factory=Iterative)

    @property
    def name(self) -> str:
        """``<preset>/<method>``, e.g. ``default/rrf_windows``."""
        return f"{self.preset}/{self.method}"

    def with_(self, **changes: Any) -> Recipe:
        """A variant: ``method``, ``preset``, a whole stage (``lists=Lists(...)``), or any stage
        field by its name (``candidates=20``, ``graph_alpha=0.6``). Changing the method or the
        PageRank list (``graph_list``) names the shipped ranker of the new shape (`ranker_of`)
        unless ``ranker`` is given too."""
        top: dict[str, Any] = {}
        staged: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            if key in ("method", "preset", *STAGES):
                top[key] = value
            elif key in FIELDS:
                staged.setdefault(FIELDS[key], {})[key] = value
            else:
                raise TypeError(f"a recipe has no field {key!r}")
        out = replace(self, **top)
        if staged:
            out = replace(out, **{stage: replace(getattr(out, stage), **values)
                                  for stage, values in staged.items()})
        if ("method" in changes or "graph_list" in changes) and "ranker" not in changes \
                and "reranking" not in changes:
            out = replace(out, reranking=replace(out.reranking, ranker=ranker_of(
                out.method, out.walk.graph_list)))
        return out

    def for_method(self, method: Method) -> Recipe:
        """The same stages for another method (with that method's ranker)."""
        return self.with_(method=method)

    def rounds(self) -> Recipe:
        """Method ``iterative``: the one-shot recipe of each round's recall, its base method
        (`Iterative.iterative_base`) with the PageRank list when ``iterative_graph_list``."""
        base = self.iterative.iterative_base
        if base not in ITERATIVE_BASES:
            raise ValueError(f"iterative_base must be one of {sorted(ITERATIVE_BASES)}")
        graph = self.walk.graph_list or self.iterative.iterative_graph_list
        return self.with_(method=base, graph_list=graph)

    def served(self, embedding: str, sparse: bool, ranked: bool = True) -> Recipe:
        """This recipe on a server whose vectors are under ``embedding`` (`rerank.embedder_key`)
        and with (``sparse``) or without a learned-sparse model. ``ranked``: whether rankers are
        shipped for that embedding; without, the learned re-ranking is off."""
        return self.with_(sparse=sparse, embedding=embedding,
                          rerank=self.reranking.rerank and ranked)

    def flat(self) -> dict[str, Any]:
        """Every stage field by name (as `with_` takes them), with ``method``."""
        out: dict[str, Any] = {"method": self.method}
        for stage in STAGES:
            value = getattr(self, stage)
            out.update((f.name, getattr(value, f.name)) for f in fields(value))
        return out


ITERATIVE_BASES: frozenset[str] = frozenset({"rrf_expand", "rrf_windows"})
"""The methods ``iterative`` can run its rounds on."""

DEFAULT = Recipe()
"""The default stages (method ``rrf_expand``, the default of a request)."""
PRESETS: dict[str, Recipe] = {
    "default": DEFAULT,
    # the least work per search: shorter lists and windows, no learned re-ranking (which reads
    # the windows of more candidates), and iterative follows up only the questions that ask for
    # several things (half its time)
    "fast": DEFAULT.with_(preset="fast", candidates=20, overfetch=4, expand_before=0,
                          expand_after=1, rerank=False, iterative_every_question=False),
    "wide": DEFAULT.with_(preset="wide", candidates=100, overfetch=10, expand_before=2,
                          expand_after=3),
    # for budgets of 20 messages and more: the graph walk joins every expanding method (on
    # LoCoMo dev it lifted rrf_windows at 20 and 50 messages and cost it at 5; once both are
    # re-ranked, they are within 0.002 at every budget)
    "deep": DEFAULT.with_(preset="deep", graph_list=True),
}
"""The named presets, each as its recipe for the default method; `RECIPES` has every method's."""

RECIPES: dict[tuple[str, Method], Recipe] = {
    (name, method): stages.for_method(method) for name, stages in PRESETS.items()
    for method in METHODS
}
"""Every named recipe: (preset, method) -> the stages of that method under that preset, each
naming its ranker (`RANKERS`)."""


def recipe(method: Method, preset: str = "default") -> Recipe:
    """The named recipe of ``method`` under ``preset`` (InvalidInput for an unknown preset)."""
    try:
        return RECIPES[preset, method]
    except KeyError:
        if preset not in PRESETS:
            raise InvalidInput("preset",
                               f"unknown preset {preset!r}; known: {sorted(PRESETS)}") from None
        raise InvalidInput("method", f"unknown method {method!r}") from None
