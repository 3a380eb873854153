"""The LangChain adapters without a server (httpx.MockTransport plays the API): the retriever keeps
at most k documents, the best in the server's order; the chat history's turns (speaker, role,
time, metadata) and the messages read back; an async client refuses the sync calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from graphmem.client import AsyncGraphMem, GraphMem
from graphmem.integrations.langchain import (
    GraphMemChatMessageHistory,
    GraphMemRetriever,
    context_documents,
    search_documents,
)
from graphmem.models import Turn
from graphmem.wire import ContextItem, ContextResult, Hit, SearchResult

T = datetime(2026, 3, 12, 14, 5, tzinfo=UTC)


def hit(i: int, score: float, nucleus: bool = True) -> Hit:
    return Hit.model_construct(id=f"m{i}", text=f"turn {i}", speaker="alice", timestamp=T,
                               session_id="s1", owner="alice", score=score, rules=["vector"],
                               nucleus=nucleus, metadata={"channel": "chat", "id": "theirs"},
                               window=[Turn.model_construct(id=f"m{i}+1", text="next",
                                                            speaker="bob", timestamp=T,
                                                            session_id="s1")])


def item(i: int, score: float, core: bool) -> ContextItem:
    return ContextItem.model_construct(evidence=f"e{i}", unit="message", id=f"m{i}",
                                       text=f"turn {i}", at=T, sources=[f"m{i}"], core=core,
                                       score=score, rules=[], tokens=3, speaker="alice",
                                       session_id="s1")


def test_at_most_k_documents_the_best_in_the_servers_order() -> None:
    hits = [hit(0, 0.2, nucleus=False), hit(1, 0.5), hit(2, 0.9), hit(3, 0.95, nucleus=False),
            hit(4, 0.3)]
    docs = search_documents(SearchResult.model_construct(hits=hits), k=2)
    assert [d.id for d in docs] == ["m1", "m2"]  # hits before neighbours, in the given order
    assert docs[0].metadata == {"channel": "chat", "id": "m1", "timestamp": T.isoformat(),
                                "session_id": "s1", "speaker": "alice", "owner": "alice",
                                "score": 0.5, "rules": ["vector"], "nucleus": True,
                                "window": [{"id": "m1+1", "timestamp": T.isoformat(),
                                            "speaker": "bob", "text": "next"}]}
    assert len(search_documents(SearchResult.model_construct(hits=hits))) == 5

    items = [item(0, 0.1, False), item(1, 0.4, True), item(2, 0.3, True), item(3, 0.9, False)]
    docs = context_documents(ContextResult.model_construct(items=items), k=1)
    assert [d.metadata["id"] for d in docs] == ["m1"]
    assert docs[0].id == "message:m1" and docs[0].metadata["timestamp"] == T.isoformat()
    assert {"session_id", "speaker", "score"} <= set(docs[0].metadata)


class Api:
    """Answers as the API would for one session; records what was sent."""

    def __init__(self) -> None:
        self.sent: list[list[dict[str, Any]]] = []
        self.stored: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            batch = json.loads(request.content)["messages"]
            self.sent.append(batch)
            for m in batch:
                self.stored.append({**m, "id": f"id{len(self.stored)}",
                                    "recorded_at": m["timestamp"]})
            return httpx.Response(201, json={"ids": [], "created": len(batch),
                                             "duplicates": 0})
        skip, limit = int(request.url.params["skip"]), int(request.url.params["limit"])
        return httpx.Response(200, json=self.stored[skip:skip + limit])


@pytest.fixture
def api() -> Iterator[tuple[Api, GraphMem]]:
    answers = Api()
    with GraphMem("http://graphmem.test", transport=httpx.MockTransport(answers)) as gm:
        yield answers, gm


def test_the_history_stores_turns_and_reads_them_back(api: tuple[Api, GraphMem]) -> None:
    answers, gm = api
    history = GraphMemChatMessageHistory(gm, "alice", "chat-1", ai_speaker="guide",
                                         metadata={"app": "travel"})
    conversation = [SystemMessage("Be brief."), HumanMessage("I moved to Lisbon."),
                    AIMessage("", tool_calls=[{"name": "weather", "args": {}, "id": "c1"}]),
                    ToolMessage("sunny", tool_call_id="c1"), AIMessage("Sunny there."),
                    HumanMessage("Hi, I am her brother.", name="bob"),
                    ChatMessage(content="A note.", role="narrator")]
    history.add_messages(conversation[:3])
    history.add_messages(conversation[3:])
    turns = [t for batch in answers.sent for t in batch]
    assert [(t["speaker"], t["role"], t["text"]) for t in turns] == [
        ("system", "system", "Be brief."), ("alice", "user", "I moved to Lisbon."),
        ("tool", "tool", "sunny"), ("guide", "assistant", "Sunny there."),
        ("bob", "user", "Hi, I am her brother."), ("narrator", None, "A note.")]
    times = [datetime.fromisoformat(t["timestamp"]) for t in turns]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert all(t.utcoffset() is not None for t in times)
    assert turns[2]["metadata"] == {"app": "travel", "tool_call_id": "c1"}
    assert turns[0]["metadata"] == {"app": "travel"}

    read = history.messages
    assert [type(m).__name__ for m in read] == ["SystemMessage", "HumanMessage", "ToolMessage",
                                                "AIMessage", "HumanMessage", "ChatMessage"]
    assert [(m.text, m.name) for m in read[:5]] == [
        ("Be brief.", None), ("I moved to Lisbon.", None), ("sunny", None),
        ("Sunny there.", None), ("Hi, I am her brother.", "bob")]
    assert isinstance(read[2], ToolMessage) and read[2].tool_call_id == "c1"
    assert isinstance(read[5], ChatMessage) and read[5].role == "narrator"
    assert [m.id for m in read] == [f"id{i}" for i in range(6)]


def test_an_async_client_refuses_the_sync_calls() -> None:
    agm = AsyncGraphMem("http://graphmem.test")
    history = GraphMemChatMessageHistory(agm, "alice", "chat-1")
    for call in (lambda: history.messages, lambda: history.add_user_message("hi"),
                 history.clear,
                 lambda: GraphMemRetriever(client=agm, owner="alice").invoke("q")):
        with pytest.raises(TypeError, match="AsyncGraphMem client: use the async call"):
            call()
