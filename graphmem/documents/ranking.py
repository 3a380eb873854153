"""Category-related ranking of chunks (pure, no database): lists derived from an owner's topic
tree and a document's sections, fused with the vector and fulltext lists.

- The topic list (`topic_list`): the candidates whose document belongs to the topics nearest
  the query (by centroid), in their fused order: a list that raises those documents' chunks.
  The label list is the same over the topic whose label best matches the query's words.
- The collapsed-tree list (`collapsed_tree`, RAPTOR's collapsed tree without an LLM): chunks,
  sections and topics in one pool ranked by their similarity to the query; a section or topic
  stands for its candidate chunks (in their fused order), a chunk for itself.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence


def document_of(chunk_id: str) -> str:
    """The document version a chunk id belongs to (chunk ids are ``<version id>:c<ordinal>``)."""
    return chunk_id.rsplit(":c", 1)[0]


def topic_list(order: Sequence[str], documents: Collection[str]) -> list[tuple[str, int]]:
    """The candidates (``order``, best first) of ``documents``, ranked from 1 in that order."""
    return _ranked(c for c in order if document_of(c) in documents)


def collapsed_tree(chunks: Sequence[tuple[str, float]],
                   groups: Sequence[tuple[float, Sequence[str]]],
                   order: Sequence[str]) -> list[tuple[str, int]]:
    """One ranked list over a pool of nodes scored on one scale (similarity to the query):
    ``chunks`` as (id, score), ``groups`` (sections, topics) as (score, their chunk ids). Nodes
    are taken best first (a chunk before a group of the same score); a chunk node gives itself,
    a group its members that are candidates (in ``order``), in their order in ``order``. Every
    candidate counts once, at its first place; ranks from 1."""
    place = {c: i for i, c in enumerate(order)}
    pool: list[tuple[float, int, int, list[str]]] = [
        (score, 0, i, [id_]) for i, (id_, score) in enumerate(chunks)]
    pool += [(score, 1, i, sorted((m for m in members if m in place), key=place.__getitem__))
             for i, (score, members) in enumerate(groups)]
    pool.sort(key=lambda n: (-n[0], n[1], n[2]))
    return _ranked(dict.fromkeys(id_ for *_, ids in pool for id_ in ids))  # first place each


def _ranked(ids: Iterable[str]) -> list[tuple[str, int]]:
    return [(id_, rank) for rank, id_ in enumerate(ids, start=1)]
