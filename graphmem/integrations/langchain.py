"""graphmem as a LangChain retriever: `GraphMemRetriever` turns a query into `Document`s through
the HTTP client's search (or, with ``use="context"``, the packed context's items), so it plugs
into any LangChain chain, a LangGraph node, or an agent tool (``create_retriever_tool``).

Install with ``pip install 'graphmem[langchain]'``. Writing memory stays the client's job
(`GraphMem.add_messages`): a retriever only reads.

    from graphmem.client import GraphMem
    from graphmem.integrations.langchain import GraphMemRetriever

    retriever = GraphMemRetriever(client=GraphMem(url, api_key=key), owner="alice", k=5)
    docs = retriever.invoke("where does alice live?")
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from graphmem.client import AsyncGraphMem, GraphMem
from graphmem.wire import ContextResult, SearchResult


class GraphMemRetriever(BaseRetriever):
    """Documents from one owner's memory.

    ``use="search"`` (default): one `Document` per message returned by hybrid search
    (neighbours of each hit included, chronological), ``page_content`` the message text and the
    metadata the message's own metadata, then its id, speaker, timestamp, session, score, rules
    and whether it is a hit (``nucleus``), which win over a key of the same name.
    ``use="context"``: one per item of ``POST /v1/context`` (facts, episodes and messages, best
    evidence first, within ``max_tokens``). ``search_options`` are further fields of the
    request (``method``, ``max_messages``, ``time_from``, a ``metadata`` filter...). Calls from
    async code use ``async_client`` when given, else the sync client in a worker thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: GraphMem
    async_client: AsyncGraphMem | None = None
    owner: str
    k: int = 10
    session_id: str | None = None
    use: Literal["search", "context"] = "search"
    search_options: dict[str, Any] = Field(default_factory=dict)

    def _options(self) -> dict[str, Any]:
        options = {"k": self.k, **self.search_options}
        if self.session_id is not None:
            options["session_id"] = self.session_id
        return options

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self.use == "context":
            return context_documents(self.client.context(query, self.owner, **self._options()))
        return search_documents(self.client.search(query, self.owner, **self._options()))

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        gm = self.async_client
        if self.use == "context":
            return context_documents(await gm.context(query, self.owner, **self._options()))
        return search_documents(await gm.search(query, self.owner, **self._options()))


def search_documents(result: SearchResult) -> list[Document]:
    return [Document(page_content=h.text, id=h.id, metadata={
        **h.metadata, "id": h.id, "speaker": h.speaker, "timestamp": h.timestamp.isoformat(),
        "session_id": h.session_id, "owner": h.owner, "score": h.score, "rules": list(h.rules),
        "nucleus": h.nucleus}) for h in result.hits]


def context_documents(result: ContextResult) -> list[Document]:
    return [Document(page_content=i.text, id=f"{i.unit}:{i.id}", metadata={
        "id": i.id, "unit": i.unit, "evidence": i.evidence, "at": i.at.isoformat(),
        "sources": list(i.sources), "score": i.score, "core": i.core,
        "speaker": i.speaker, "session_id": i.session_id}) for i in result.items]
