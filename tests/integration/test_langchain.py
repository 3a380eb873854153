"""The LangChain retriever against the real server: documents from search and from the packed
context, sync and async, and as an agent tool."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from graphmem.api.app import create_app
from graphmem.client import AsyncGraphMem, GraphMem
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.support.live_server import serve

from .helpers import msg
from .helpers import owner as new_owner

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
from langchain_core.tools import create_retriever_tool

from graphmem.integrations.langchain import GraphMemRetriever

KEY = "lc-key"
TENANT = f"t-lc-{uuid.uuid4().hex[:8]}"
TURNS = ["I moved to Lisbon last month.", "How is the weather there?",
         "Sunny, and I found a flat near the river.", "My sister still lives in Porto."]


@pytest.fixture(scope="module")
def stored(settings: Settings, memory: Memory) -> Iterator[tuple[str, str]]:
    s = settings.model_copy(update={"api_keys": {hash_api_key(KEY): TENANT}})
    o = new_owner()
    with serve(create_app(s, memory)) as url, GraphMem(url, api_key=KEY) as gm:
        gm.add_messages([msg(i, o, text=t, metadata={"channel": "sms" if i == 3 else "chat"})
                         for i, t in enumerate(TURNS)])
        yield url, o
        gm.delete_owner(o)


def test_documents_from_search(stored: tuple[str, str]) -> None:
    url, o = stored
    with GraphMem(url, api_key=KEY) as gm:
        retriever = GraphMemRetriever(client=gm, owner=o, k=1,
                                      search_options={"expand": {"before": 0, "after": 1}})
        docs = retriever.invoke("Which city did I move to?")
    assert docs[0].page_content == TURNS[0]
    assert docs[0].metadata["nucleus"] and docs[0].metadata["speaker"] == "alice"
    assert docs[0].metadata["timestamp"].endswith("+00:00")
    assert [d.page_content for d in docs] == TURNS[:2]  # the hit and the turn after it
    assert docs[0].metadata["channel"] == "chat"  # the message's own metadata too


def test_a_metadata_filter_in_the_search_options(stored: tuple[str, str]) -> None:
    url, o = stored
    with GraphMem(url, api_key=KEY) as gm:
        retriever = GraphMemRetriever(client=gm, owner=o, k=2,
                                      search_options={"metadata": {"channel": "sms"}})
        docs = retriever.invoke("Which city did I move to?")
    assert [(d.page_content, d.metadata["channel"]) for d in docs] == [(TURNS[3], "sms")]


def test_documents_from_the_context_async_and_as_a_tool(stored: tuple[str, str]) -> None:
    url, o = stored

    async def main() -> list[str]:
        async with AsyncGraphMem(url, api_key=KEY) as agm:
            with GraphMem(url, api_key=KEY) as gm:
                retriever = GraphMemRetriever(client=gm, async_client=agm, owner=o,
                                              use="context", search_options={"max_tokens": 300})
                docs = await retriever.ainvoke("Where does my sister live?")
                return [d.page_content for d in docs]

    texts = asyncio.run(main())
    assert TURNS[3] in texts

    with GraphMem(url, api_key=KEY) as gm:
        tool = create_retriever_tool(GraphMemRetriever(client=gm, owner=o, k=2), "memory",
                                     "Search the user's long-term memory.")
        answer = tool.invoke({"query": "the flat near the river"})
    assert TURNS[2] in answer
