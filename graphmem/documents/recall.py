"""Chunks as a unit of the shared search and context (`POST /v1/search` with units ``chunks``,
`POST /v1/context` with unit ``chunk``): a `SearchRequest` read as a `ChunkSearch` (the chunk
search itself is `graphmem.documents.service.Documents.search`), its result as a
`SearchResult`, and chunks rendered for a prompt with their citations. Pure: no database."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from graphmem.documents.models import ChunkResult, ChunkSearch
from graphmem.errors import InvalidInput
from graphmem.models import (
    MAX_CHUNK_HITS,
    MAX_CHUNK_NEIGHBOURS,
    ChunkHit,
    Method,
    SearchRequest,
    SearchResult,
)
from graphmem.retrieval.context import estimate_tokens, prompt_safe

ChunkMethod = Literal["vector", "fulltext", "rrf"]


def chunk_method(method: Method) -> ChunkMethod:
    """The chunk search's method for a request's: vector or fulltext alone, else rrf (both
    lists fused)."""
    return method if method == "vector" or method == "fulltext" else "rrf"


def chunk_search(req: SearchRequest) -> ChunkSearch:
    """``req`` (units ``chunks``) as the chunk search it asks for. InvalidInput naming the field
    for what only messages have (a session, event times, a message budget, time order) and for
    bounds of the chunk search (k, neighbours)."""
    for field in ("session_id", "time_from", "time_to", "max_messages"):
        if getattr(req, field) is not None:
            raise InvalidInput(field, "messages only: chunks have no session or event time "
                               "(as_of gives the document versions valid then)")
    if req.order != "relevance":
        raise InvalidInput("order", "chunks are returned best first (order relevance)")
    if req.k > MAX_CHUNK_HITS:
        raise InvalidInput("k", f"at most {MAX_CHUNK_HITS} with units chunks")
    neighbours = 0
    if req.expand is not None:
        neighbours = max(req.expand.before, req.expand.after)
        if neighbours > MAX_CHUNK_NEIGHBOURS:
            raise InvalidInput("expand", f"with units chunks, at most {MAX_CHUNK_NEIGHBOURS} "
                               "neighbouring chunks each way")
    return ChunkSearch.model_validate({
        "query": req.query, "owner": req.owner, "k": req.k, "documents": req.documents,
        "metadata": req.metadata, "as_of": req.as_of, "method": chunk_method(req.method),
        "neighbours": neighbours})


def search_result(req: SearchRequest, found: ChunkResult) -> SearchResult:
    """A chunk search's result as the shared search's: the chunks in ``chunks`` (no message
    hits), rendered in ``context``."""
    context = render(found.chunks)
    return SearchResult(query=req.query, method=chunk_method(req.method), hits=[],
                        chunks=found.chunks, context=context,
                        context_tokens=estimate_tokens(context))


def document_header(key: str, version: int, title: str | None,
                    valid_from: datetime | None) -> str:
    """The header of a run of chunks of one document version: ``## document "Title" (key,
    version 2, valid from 2024-01-01)``."""
    name = f'"{title}" ({key}, ' if title else f"{key} ("
    since = f", valid from {valid_from:%Y-%m-%d}" if valid_from is not None else ""
    return prompt_safe(f"## document {name}version {version}{since})")


def chunk_line(section: Sequence[str], text: str) -> str:
    """A chunk's line(s) under its document's header: its section path, then its text."""
    path = " > ".join(section)
    body = f"{path}: {text}" if path else text
    return prompt_safe(body).strip().replace("\n", "\n    ")


def render(chunks: Sequence[ChunkHit]) -> str:
    """Chunks in the order given, one block per run of chunks of one document version."""
    blocks: list[list[str]] = []
    last = None
    for c in chunks:
        if c.document_id != last:
            blocks.append([document_header(c.key, c.version, c.title, c.valid_from)])
            last = c.document_id
        blocks[-1].append(chunk_line(c.section, c.text))
    return "\n\n".join("\n".join(b) for b in blocks)
