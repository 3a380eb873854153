"""LangChain against the real server: the retriever's documents from search and from the packed
context (at most k, each with its date, id, session, speaker and score), with a sync or an async
client and as an agent tool; the chat message history storing a conversation's turns, reading
them back in order and forgetting the session, sync, async and under RunnableWithMessageHistory.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import datetime

import pytest

from graphmem.api.app import create_app
from graphmem.client import AsyncGraphMem, GraphMem
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.support.live_server import serve

from .helpers import msg
from .helpers import owner as new_owner

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.tools import create_retriever_tool

from graphmem.integrations.langchain import GraphMemChatMessageHistory, GraphMemRetriever

KEY = "lc-key"
TENANT = f"t-lc-{uuid.uuid4().hex[:8]}"
TURNS = ["I moved to Lisbon last month.", "How is the weather there?",
         "Sunny, and I found a flat near the river.", "My sister still lives in Porto."]


@pytest.fixture(scope="module")
def server(settings: Settings, memory: Memory) -> Iterator[str]:
    s = settings.model_copy(update={"api_keys": {hash_api_key(KEY): TENANT}})
    with serve(create_app(s, memory)) as url:
        yield url


@pytest.fixture(scope="module")
def stored(server: str) -> Iterator[tuple[str, str]]:
    o = new_owner()
    with GraphMem(server, api_key=KEY) as gm:
        gm.add_messages([msg(i, o, text=t, metadata={"channel": "sms" if i == 3 else "chat"})
                         for i, t in enumerate(TURNS)])
        yield server, o
        gm.delete_owner(o)


def test_documents_from_search_k_of_them_each_with_its_date(stored: tuple[str, str]) -> None:
    url, o = stored
    with GraphMem(url, api_key=KEY) as gm:
        docs = GraphMemRetriever(client=gm, owner=o, k=1).invoke("Which city did I move to?")
        two = GraphMemRetriever(client=gm, owner=o, k=2).invoke("Which city did I move to?")
    assert [d.page_content for d in docs] == [TURNS[0]]
    meta = docs[0].metadata
    assert meta["id"] == docs[0].id == f"{o}-s1-0"
    assert datetime.fromisoformat(meta["timestamp"]).utcoffset() is not None
    assert meta["timestamp"] == "2023-05-08T13:56:00+00:00"
    assert (meta["session_id"], meta["speaker"], meta["owner"]) == ("s1", "alice", o)
    assert meta["score"] > 0 and meta["nucleus"]
    assert meta["channel"] == "chat"  # the message's own metadata too
    assert len(two) == 2 and TURNS[0] in [d.page_content for d in two]


def test_a_metadata_filter_in_the_search_options(stored: tuple[str, str]) -> None:
    url, o = stored
    with GraphMem(url, api_key=KEY) as gm:
        retriever = GraphMemRetriever(client=gm, owner=o, k=2,
                                      search_options={"metadata": {"channel": "sms"}})
        docs = retriever.invoke("Which city did I move to?")
    assert [(d.page_content, d.metadata["channel"]) for d in docs] == [(TURNS[3], "sms")]


def test_an_async_client_documents_from_the_context_and_a_tool(stored: tuple[str, str]) -> None:
    url, o = stored

    async def main() -> tuple[list[str], list[str], int]:
        async with AsyncGraphMem(url, api_key=KEY) as agm:
            context = GraphMemRetriever(client=agm, owner=o, use="context", k=2,
                                        search_options={"max_tokens": 300})
            found = await context.ainvoke("Where does my sister live?")
            search = GraphMemRetriever(client=agm, owner=o, k=1)
            hits = await search.ainvoke("Where does my sister live?")
            with pytest.raises(TypeError, match="AsyncGraphMem"):
                search.invoke("a sync call with an async client")
            return [d.page_content for d in found], [d.page_content for d in hits], \
                sum("timestamp" in d.metadata and "score" in d.metadata for d in found)

    texts, hits, dated = asyncio.run(main())
    assert TURNS[3] in texts and len(texts) <= 2 and dated == len(texts)
    assert hits == [TURNS[3]]

    with GraphMem(url, api_key=KEY) as gm:
        tool = create_retriever_tool(GraphMemRetriever(client=gm, owner=o, k=2), "memory",
                                     "Search the user's long-term memory.")
        answer = tool.invoke({"query": "the flat near the river"})
    assert TURNS[2] in answer


CONVERSATION = [SystemMessage("You are a travel assistant."),
                HumanMessage("I moved to Lisbon last month."),
                AIMessage("Welcome to Lisbon! How do you like it?"),
                AIMessage("", tool_calls=[{"name": "weather", "args": {}, "id": "c1"}]),
                ToolMessage("sunny, 24 C", tool_call_id="c1"),
                HumanMessage("Sunny, I love it.", name="sam")]


def _plain(messages: list[BaseMessage]) -> list[tuple[str, str, str | None]]:
    return [(type(m).__name__, str(m.text), m.name) for m in messages]


def test_the_chat_history_stores_reads_back_and_forgets_a_session(server: str) -> None:
    o = new_owner()
    with GraphMem(server, api_key=KEY) as gm:
        history = GraphMemChatMessageHistory(gm, owner=o, session_id="chat-1",
                                             metadata={"app": "travel"})
        assert history.messages == []
        history.clear()  # nothing stored yet: nothing to forget
        history.add_messages(CONVERSATION[:3])
        history.add_messages(CONVERSATION[3:])
        read = history.messages
        stored = gm.session_messages("chat-1", owner=o)
        other = GraphMemChatMessageHistory(gm, owner=o, session_id="chat-2")
        other.add_user_message("Another conversation.")
        history.clear()
        after = history.messages
        history.add_ai_message("A new start.")
        again = history.messages
        kept = other.messages
        gm.delete_owner(o)
    kept_text = [(t, x) for t, x, _ in _plain(CONVERSATION) if x]  # the tool call has no text
    assert [(t, x) for t, x, _ in _plain(read)] == kept_text
    assert _plain(read)[-1] == ("HumanMessage", "Sunny, I love it.", "sam")
    assert [m.id for m in read] == [m.id for m in stored]
    assert [(m.speaker, m.role) for m in stored] == [
        ("system", "system"), (o, "user"), ("assistant", "assistant"), ("tool", "tool"),
        ("sam", "user")]
    times = [m.timestamp for m in stored]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert all(t.tzinfo is not None for t in times)
    assert stored[3].metadata == {"app": "travel", "tool_call_id": "c1"}
    assert isinstance(read[3], ToolMessage) and read[3].tool_call_id == "c1"
    assert after == [] and _plain(again) == [("AIMessage", "A new start.", None)]
    assert _plain(kept) == [("HumanMessage", "Another conversation.", None)]


def test_the_chat_history_with_an_async_client(server: str) -> None:
    o = new_owner()

    async def main() -> tuple[list[str], list[str]]:
        async with AsyncGraphMem(server, api_key=KEY) as agm:
            history = GraphMemChatMessageHistory(agm, owner=o, session_id="chat-a")
            await history.aadd_messages([HumanMessage("Hello from asyncio."),
                                         AIMessage("Hello back.")])
            read = [str(m.text) for m in await history.aget_messages()]
            with pytest.raises(TypeError, match="aget_messages"):
                _ = history.messages
            await history.aclear()
            gone = [str(m.text) for m in await history.aget_messages()]
            await agm.delete_owner(o)
            return read, gone

    read, gone = asyncio.run(main())
    assert read == ["Hello from asyncio.", "Hello back."] and gone == []


@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")  # 1.x still has it
def test_a_langchain_app_keeps_its_turns_in_graphmem(server: str) -> None:
    """RunnableWithMessageHistory with the history: no glue code. The chat model is LangChain's
    scripted test model (its answers are the turns the app stores, not graphmem's output)."""
    o = new_owner()
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"),
                                               ("human", "{question}")])
    model = FakeListChatModel(responses=["Lisbon is lovely.", "You said Lisbon."])
    with GraphMem(server, api_key=KEY) as gm:
        app = RunnableWithMessageHistory(
            prompt | model,
            lambda session_id: GraphMemChatMessageHistory(gm, owner=o, session_id=session_id),
            input_messages_key="question", history_messages_key="history")
        config = {"configurable": {"session_id": "app-1"}}
        app.invoke({"question": "I moved to Lisbon."}, config)  # type: ignore[arg-type]
        app.invoke({"question": "Where did I move?"}, config)  # type: ignore[arg-type]
        stored = gm.session_messages("app-1", owner=o)
        gm.delete_owner(o)
    assert [(m.role, m.text) for m in stored] == [
        ("user", "I moved to Lisbon."), ("assistant", "Lisbon is lovely."),
        ("user", "Where did I move?"), ("assistant", "You said Lisbon.")]
