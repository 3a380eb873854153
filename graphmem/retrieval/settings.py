"""Retrieval settings as a value object, with named presets."""

from __future__ import annotations

from dataclasses import dataclass, replace

from graphmem.errors import InvalidInput

DEFAULT_EMBEDDING = "minilm/sentence"
"""The default embedding model and unit (``<embedder>/<unit>``, as `rerank.embedder_key` writes
them): the one a ranker file names when it names none."""


@dataclass(frozen=True)
class RetrievalSettings:
    """How one search runs. Immutable: derive variants with :meth:`with_`."""

    rrf_k: int = 60
    """The constant of reciprocal rank fusion: score = sum over lists of 1/(rrf_k + rank)."""
    candidates: int = 50
    """How many hits each recall list (vector, fulltext) contributes before fusion."""
    overfetch: int = 8
    """ANN/fulltext results fetched per wanted hit, before the tenant/owner filter drops others'."""
    one_round_trip: bool = True
    """The message lists ``vector`` and ``fulltext`` in one query, once the query is embedded
    (the same hits); False: the fulltext query runs while the query is being embedded, then the
    vector query (less wait on an idle server, two round trips)."""
    expand_before: int = 1
    expand_after: int = 2
    neighbour_decay: float = 0.35
    """A neighbour at distance d earns nucleus score x decay^d (chosen on the LoCoMo dev set, for
    fused scores; a learned ranker's probabilities use its own, `Ranker.decay`)."""
    normalise_time: bool = True
    """Show relative time expressions resolved in the context: "yesterday [2023-05-07]"."""
    max_messages: int | None = None
    """Budget of messages returned after expansion; None: every nucleus with its window."""
    window_sizes: tuple[int, ...] = (3, 5)
    """Method ``rrf_windows``: the sizes of turn windows searched (each a recall list per index;
    windows of 3 and 5 turns are built by formation)."""
    window_indexes: tuple[str, ...] = ("vector", "fulltext")
    """Method ``rrf_windows``: the indexes searched for each window size."""
    window_split: bool = True
    """Method ``rrf_windows``: a window's vote is shared by the turns it covers, each window list
    weighing 1/size in the fusion (the turn lists weigh 1); False: every window list weighs 1."""
    window_matched_only: bool = False
    """Method ``rrf_windows``: a window credits only its turns that the turn lists found too (it
    re-ranks them and adds no turn of its own)."""
    session_prior: bool = False
    """Method ``rrf_windows``: add the session prior list (candidates ranked by their session;
    off by default: with split windows it lowered recall on LoCoMo dev)."""
    session_depth: int = 1
    """A session scores the sum of the fused scores of its ``session_depth`` best candidates."""
    iterative_base: str = "rrf_windows"
    """Method ``iterative``: the one-shot method each round's recall runs (``rrf_windows`` or
    ``rrf_expand``). ``rrf_windows`` by default: ``iterative`` is the method asked for its recall,
    and on LoCoMo dev its rounds on ``rrf_expand`` only tied ``rrf_expand``."""
    iterative_graph_list: bool = True
    """Method ``iterative``: its rounds add the personalised PageRank list (`graph_list`) to the
    base method's lists, whatever ``graph_list`` says for the one-shot methods (on LoCoMo dev
    +0.004 to +0.006 recall at 10-50 messages over rounds on ``rrf_windows`` alone, for about 15
    ms more at p50)."""
    iterative_every_question: bool = True
    """Method ``iterative``, offline decider: follow-up queries for every question, not only for
    those that ask for several things (False). On LoCoMo dev +0.004 to +0.007 at 5-20 messages
    and multi-hop @20 0.693 -> 0.707, for about twice the time (p50 85 against 36 ms in one
    run): ``iterative`` is the method asked for its recall; ``rrf_windows`` is the quick one.
    Preset ``fast`` turns it off."""
    iterative_rounds: int = 3
    """Method ``iterative``: R, at most this many decider calls (so at most
    1 + (R - 1) x L recalls); 0 makes it the base method with the iterative assembly."""
    iterative_queries: int = 3
    """Method ``iterative``: L, at most this many follow-up queries per round."""
    iterative_patience: int = 1
    """Method ``iterative``: stop after this many rounds in a row without progress (nothing
    kept, nothing new among the first K)."""
    iterative_fallback: int = 5
    """Method ``iterative``: when the decider fails for good, its first f candidates form the
    core (the result is then the base method's ranking)."""
    iterative_core_share: float = 0.5
    """Method ``iterative``: the core (kept evidence, returned first) takes at most this share of
    the message budget K (at least 1)."""
    iterative_follow_up_weight: float = 1.0
    """Method ``iterative``: the scores of a follow-up query's candidates are multiplied by this
    before they meet the question's (a candidate's score is the max over its queries)."""
    iterative_follow_up_depth: int = 10
    """Method ``iterative``: a follow-up query offers at most its first this many candidates (the
    question offers all K)."""
    iterative_max_tokens: int | None = None
    """Method ``iterative``: a token budget of the assembled messages (None: K messages)."""
    iterative_shown: int = 12
    """Method ``iterative`` with an LLM decider: candidates shown to the model per round."""

    graph_list: bool = False
    """Every expanding method (``rrf_expand``, ``rrf_windows``, ``iterative``), not only
    ``graph``, adds the personalised PageRank list to its fusion (preset ``deep``)."""
    graph_weight: float = 1.0
    """Method ``graph``: the weight of the personalised PageRank list in the fusion."""
    graph_alpha: float = 0.5
    """Method ``graph``: PageRank's damping (the chance of following an edge, not restarting)."""
    graph_seeds: int = 5
    """Method ``graph``: the best fused candidates whose neighbourhood is walked (restarts)."""
    graph_query_share: float = 0.3
    """Method ``graph``: the share of restarts at the entities the query names."""
    graph_max_degree: int = 30
    """Method ``graph``: entities mentioned by more of the owner's messages are left out."""

    rerank: bool = True
    """The expanding methods re-rank their fused candidates with the shipped learned ranker of
    their recall lists under the embedding (`graphmem.retrieval.rerank`) before expansion, when
    there is one (for ``rrf_expand``, ``rrf_windows`` and ``graph`` as they are by default, and
    with the PageRank list of preset ``deep``; with or without the learned-sparse list)."""

    embedding: str = DEFAULT_EMBEDDING
    """The embedding model and unit of the stored vectors (`rerank.embedder_key`): the learned
    re-ranking uses the rankers trained under it (set by `Memory.retrieval_settings`)."""

    sparse: bool = False
    """The hybrid methods add the learned-sparse list (``sparse``) to the message lists: set by
    `Memory.retrieval_settings` when a sparse model is configured (``GRAPHMEM_SPARSE``)."""
    sparse_weight: float = 1.0
    """The weight of the learned-sparse list in the fusion."""

    def with_(self, **changes: object) -> RetrievalSettings:
        return replace(self, **changes)  # type: ignore[arg-type]


PRESETS: dict[str, RetrievalSettings] = {
    "default": RetrievalSettings(),
    # the least work per search: shorter lists and windows, no learned re-ranking (which reads
    # the windows of more candidates), and iterative follows up only the questions that ask for
    # several things (half its time)
    "fast": RetrievalSettings(candidates=20, overfetch=4, expand_before=0, expand_after=1,
                              rerank=False, iterative_every_question=False),
    "wide": RetrievalSettings(candidates=100, overfetch=10, expand_before=2, expand_after=3),
    # for budgets of 20 messages and more: the graph walk joins every expanding method (on
    # LoCoMo dev it lifted rrf_windows at 20 and 50 messages and cost it at 5; once both are
    # re-ranked, they are within 0.002 at every budget)
    "deep": RetrievalSettings(graph_list=True),
}


def preset(name: str) -> RetrievalSettings:
    try:
        return PRESETS[name]
    except KeyError:
        raise InvalidInput("preset", f"unknown preset {name!r}; known: {sorted(PRESETS)}") from None
