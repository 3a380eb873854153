"""The reader (`POST /v1/answer`): an LLM answers a question from a packed context and cites the
context's evidence ids (``e1`` .. ``eN``), which are mapped back to the units and their sources.

A citation of an id the context does not have is dropped and reported (`invented_citations`);
an answer given without being marked insufficient but with nothing left to cite still stands,
with no citations (the caller sees it). An empty context is answered as insufficient without a
call. Without an LLM configured, `ReaderNotConfigured` (501) names the settings to set: there
is never an answer that no model gave. Every call is accounted as operation ``answer`` to the
tenant (`graphmem.store.usage`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

from graphmem.answer.prompts import answer_messages
from graphmem.config import Settings
from graphmem.llm.client import LLMClient, LLMUnavailable
from graphmem.llm.usage import Usage, UsageSink, tenant_scope, tenant_sink
from graphmem.models import AnswerResult, Citation, ContextResult
from graphmem.retrieval.context import prompt_safe
from graphmem.store import Store
from graphmem.store.usage import UsageStore

OPERATION = "answer"
_EVIDENCE = re.compile(r"\[?\s*(e\d+)\s*\]?", re.IGNORECASE)


class ReaderNotConfigured(LLMUnavailable):
    status = 501
    title = "LLM not configured"

    def __init__(self) -> None:
        super().__init__(
            "answering needs an LLM and none is configured: set GRAPHMEM_LLM_BASE_URL (any "
            "OpenAI-compatible endpoint) and GRAPHMEM_LLM_MODEL, and GRAPHMEM_LLM_API_KEY if "
            "the endpoint needs one (`graphmem llm start` runs a local model and prints "
            "them); POST /v1/context gives the same context without an LLM")


class ReaderReply(BaseModel):
    """What the model replies."""

    answer: str = Field(description="Short; empty when insufficient")
    citations: list[str] = Field(default_factory=list, description="Evidence ids, e.g. e2")
    insufficient: bool = False


def reply_schema(count: int) -> dict[str, Any]:
    """The reply's JSON schema for a server that constrains its output: only the context's
    evidence ids can be cited."""
    schema = ReaderReply.model_json_schema()
    ids = [f"e{n}" for n in range(1, count + 1)]
    items: dict[str, Any] = {"type": "string", "enum": ids} if ids else {"type": "string"}
    schema["properties"]["citations"] = {"type": "array", "items": items,
                                         **({} if ids else {"maxItems": 0})}
    schema["required"] = ["answer", "citations", "insufficient"]
    return schema


_captured: ContextVar[list[Usage] | None] = ContextVar("graphmem_answer_usage", default=None)


def _capturing(sink: UsageSink) -> UsageSink:
    """``sink``, and the record kept for the call being made in this thread (the client calls
    its sink in the calling thread), so a reply can say what it cost."""
    def both(usage: Usage) -> None:
        sink(usage)
        box = _captured.get()
        if box is not None:
            box.append(usage)
    return both


@contextmanager
def _capture() -> Iterator[list[Usage]]:
    box: list[Usage] = []
    token = _captured.set(box)
    try:
        yield box
    finally:
        _captured.reset(token)


def citations(cited: list[str], ctx: ContextResult) -> tuple[list[Citation], list[str]]:
    """The cited items of the context, once each in citation order, and the ids cited that the
    context does not have. ``E2``, ``[e2]`` and `` e2 `` all name ``e2``."""
    by_id = {i.evidence: i for i in ctx.items}
    kept: dict[str, Citation] = {}
    invented: list[str] = []
    for raw in cited:
        m = _EVIDENCE.fullmatch(raw.strip())
        key = m.group(1).lower() if m else raw
        item = by_id.get(key)
        if item is None:
            invented.append(raw)
        elif key not in kept:
            kept[key] = Citation(evidence=key, unit=item.unit, id=item.id, sources=item.sources)
    return list(kept.values()), invented


def sources(cited: list[Citation]) -> list[str]:
    """What the cited units rest on, in citation order, once each: a message itself, an
    episode's messages, a fact's sources."""
    return list(dict.fromkeys(s for c in cited for s in c.sources))


class Reader:
    """Answers from a packed context with one structured LLM call. Thread-safe."""

    def __init__(self, client: LLMClient) -> None:
        self._client = client

    @classmethod
    def for_settings(cls, settings: Settings, store: Store) -> Reader | None:
        """A reader when an LLM is configured (calls accounted to the tenant in Neo4j); None
        otherwise."""
        llm = settings.llm()
        if not llm.enabled:
            return None
        llm = llm.model_copy(update={"temperature": settings.answer_temperature})
        sink = _capturing(tenant_sink(UsageStore(store).record))
        return cls(LLMClient(llm, sink=sink))

    @property
    def model(self) -> str:
        return self._client.model

    def close(self) -> None:
        self._client.close()

    def answer(self, tenant: str, ctx: ContextResult) -> AnswerResult:
        """The answer to ``ctx.query`` from ``ctx`` alone. Raises `LLMFailure` (502) when the
        model gave no usable reply after the client's retries (malformed ones included)."""
        if not ctx.items:
            return AnswerResult(query=ctx.query, answer="", insufficient=True, citations=[],
                                sources=[], invented_citations=[], model=self.model,
                                prompt_tokens=0, completion_tokens=0, context=ctx)
        messages = answer_messages(prompt_safe(ctx.query), ctx.as_of, ctx.context,
                                   len(ctx.items))
        with tenant_scope(tenant), _capture() as spent:
            reply = self._client.complete_structured(OPERATION, messages, ReaderReply,
                                                     reply_schema(len(ctx.items)))
        cited, invented = citations(reply.citations, ctx)
        answer = reply.answer.strip()
        insufficient = reply.insufficient or not answer
        return AnswerResult(
            query=ctx.query, answer=answer, insufficient=insufficient, citations=cited,
            sources=sources(cited), invented_citations=invented,
            model=self.model, prompt_tokens=sum(u.prompt_tokens for u in spent),
            completion_tokens=sum(u.completion_tokens for u in spent), context=ctx)
