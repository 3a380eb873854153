"""graphmem for LangChain: `GraphMemRetriever` reads memory as `Document`s and
`GraphMemChatMessageHistory` stores a conversation's turns, both through the HTTP client
(`GraphMem`, or `AsyncGraphMem` for ``ainvoke`` and the other async calls).

The retriever turns a query into `Document`s through the client's search (or, with
``use="context"``, the packed context's items), so it plugs into any LangChain chain, a
LangGraph node, or an agent tool (``create_retriever_tool``). The history is a
`BaseChatMessageHistory`: ``add_messages`` stores each turn as a message of the owner's session
(speaker, role and the time it was added), ``messages`` reads the session back in order, and
``clear`` forgets it; so `RunnableWithMessageHistory` (or any code keeping a chat history)
stores its turns in graphmem without glue code.

Install with ``pip install 'graphmem[langchain]'``.

    from graphmem.client import GraphMem
    from graphmem.integrations.langchain import GraphMemChatMessageHistory, GraphMemRetriever

    gm = GraphMem(url, api_key=key)
    history = GraphMemChatMessageHistory(gm, owner="alice", session_id="chat-1")
    history.add_user_message("I moved to Lisbon last month.")
    docs = GraphMemRetriever(client=gm, owner="alice", k=5).invoke("where does alice live?")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from graphmem.client import AsyncGraphMem, GraphMem, NotFoundError
from graphmem.wire import MAX_BATCH, ContextResult, Message, Scalar, SearchResult

MAX_CONTEXT_K = 50
"""The most hits per unit a context request takes (`ContextRequest.k`)."""
PAGE = 1000
"""Messages read a request when reading a session back (the API's largest page)."""


def _async_only(what: str) -> TypeError:
    return TypeError(f"{what} with an AsyncGraphMem client: use the async call (ainvoke, "
                     "aget_messages, aadd_messages, aclear) or pass a GraphMem")


# --- reading: the retriever --------------------------------------------------------------------

class GraphMemRetriever(BaseRetriever):
    """Documents from one owner's memory: at most ``k`` of them.

    ``use="search"`` (default): one `Document` per message hit of hybrid search, in the order
    the search returns them, ``page_content`` the message's text and the metadata the
    message's own metadata, then its ``id``, ``timestamp`` (ISO 8601, UTC), ``session_id``,
    ``speaker``, ``owner``, ``score``, ``rules``, ``nucleus`` (found by the search itself) and
    ``window`` (the turns around it: id, timestamp, speaker, text), which win over a key of the
    same name. ``use="context"``: one per item of the packed
    context (``POST /v1/context``: facts, episodes and messages within ``max_tokens``), the
    search's own hits before the turns around them and the best of each first, in the order
    of the context, with the same keys (``timestamp`` is a message's time, an episode's
    start, a fact's ``valid_from``). ``search_options`` are further fields of the request
    (``method``, ``time_from``, a ``metadata`` filter, ``max_tokens``...). ``client`` is a
    `GraphMem` or an `AsyncGraphMem` (then only the async calls, ``ainvoke``...); with a
    `GraphMem`, async calls use ``async_client`` when given, else the sync client in a worker
    thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: GraphMem | AsyncGraphMem
    async_client: AsyncGraphMem | None = None
    owner: str
    k: int = Field(default=10, ge=1, le=200, description="How many documents, at most")
    session_id: str | None = None
    use: Literal["search", "context"] = "search"
    search_options: dict[str, Any] = Field(default_factory=dict)

    def _options(self) -> dict[str, Any]:
        k = min(self.k, MAX_CONTEXT_K) if self.use == "context" else self.k
        options = {**self.search_options, "k": k}
        if self.session_id is not None:
            options["session_id"] = self.session_id
        return options

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        gm = self.client
        if not isinstance(gm, GraphMem):
            raise _async_only("invoke")
        if self.use == "context":
            return context_documents(gm.context(query, self.owner, **self._options()), self.k)
        return search_documents(gm.search(query, self.owner, **self._options()), self.k)

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        gm = self.client if isinstance(self.client, AsyncGraphMem) else self.async_client
        if gm is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        if self.use == "context":
            found = await gm.context(query, self.owner, **self._options())
            return context_documents(found, self.k)
        return search_documents(await gm.search(query, self.owner, **self._options()), self.k)


def search_documents(result: SearchResult, k: int | None = None) -> list[Document]:
    """The message hits as documents; with ``k``, the best ``k`` (found by the search itself
    before the turns around them, then by score) in the search's order."""
    hits = result.hits
    if k is not None and len(hits) > k:
        best = sorted(range(len(hits)), key=lambda i: (not hits[i].nucleus, -hits[i].score))
        keep = set(best[:k])
        hits = [h for i, h in enumerate(hits) if i in keep]
    return [Document(page_content=h.text, id=h.id, metadata={
        **h.metadata, "id": h.id, "timestamp": h.timestamp.isoformat(),
        "session_id": h.session_id, "speaker": h.speaker, "owner": h.owner, "score": h.score,
        "rules": list(h.rules), "nucleus": h.nucleus, "window": [
            {"id": t.id, "timestamp": t.timestamp.isoformat(), "speaker": t.speaker,
             "text": t.text} for t in h.window]}) for h in hits]


def context_documents(result: ContextResult, k: int | None = None) -> list[Document]:
    """The context's items as documents; with ``k``, the best ``k`` (the search's own hits
    before the turns around them, then by score) in the order of the context."""
    items = result.items
    if k is not None and len(items) > k:
        best = sorted(range(len(items)), key=lambda i: (not items[i].core, -items[i].score))
        keep = set(best[:k])
        items = [item for i, item in enumerate(items) if i in keep]
    return [Document(page_content=i.text, id=f"{i.unit}:{i.id}", metadata={
        "id": i.id, "unit": i.unit, "timestamp": i.at.isoformat(), "session_id": i.session_id,
        "speaker": i.speaker, "score": i.score, "evidence": i.evidence, "at": i.at.isoformat(),
        "sources": list(i.sources), "core": i.core}) for i in items]


# --- writing: the chat message history ---------------------------------------------------------

ROLES: dict[str, Literal["user", "assistant", "system", "tool"]] = {
    "human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
"""graphmem's role of each LangChain message type (other types are stored without a role)."""


class GraphMemChatMessageHistory(BaseChatMessageHistory):
    """One session of ``owner``'s memory as a LangChain chat history.

    ``add_messages`` stores each message's text as a turn of ``session_id``: its speaker is
    the message's ``name`` if it has one, else ``user_speaker`` (default: the owner) for a
    human message, ``ai_speaker`` for an AI message, ``system`` or ``tool``; its role follows
    the message type; its time is when it was added (aware UTC, one microsecond apart within a
    batch so the order holds); ``metadata`` is added to every turn (a tool message's
    ``tool_call_id`` too). A message without text (an AI message carrying tool calls only) is
    not stored: graphmem keeps what was said. ``messages`` reads the session back in order as
    `HumanMessage`, `AIMessage`, `SystemMessage`, `ToolMessage` (or `ChatMessage` for a turn
    without a role), each with its graphmem id; ``clear`` forgets the session (its messages
    and what rests only on them). With an `AsyncGraphMem` client, use the async calls
    (``aadd_messages``, ``aget_messages``, ``aclear``).
    """

    def __init__(self, client: GraphMem | AsyncGraphMem, owner: str, session_id: str, *,
                 user_speaker: str | None = None, ai_speaker: str = "assistant",
                 metadata: Mapping[str, Scalar] | None = None) -> None:
        super().__init__()
        self.client = client
        self.owner = owner
        self.session_id = session_id
        self.user_speaker = user_speaker or owner
        self.ai_speaker = ai_speaker
        self.metadata = dict(metadata or {})
        self._last: datetime | None = None

    # the turns as graphmem stores them, and back

    def _speaker(self, message: BaseMessage) -> str:
        if message.name:
            return message.name
        if isinstance(message, ChatMessage):
            return message.role
        return {"human": self.user_speaker, "ai": self.ai_speaker}.get(message.type,
                                                                     message.type)

    def _turns(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        """The messages with text as turns (the client validates them: `InvalidInputError` names
        the field at fault)."""
        now = datetime.now(UTC)
        if self._last is not None and now <= self._last:
            now = self._last + timedelta(microseconds=1)
        turns: list[dict[str, Any]] = []
        for message in messages:
            text = str(message.text).strip()
            if not text:
                continue
            metadata = dict(self.metadata)
            if isinstance(message, ToolMessage):
                metadata["tool_call_id"] = message.tool_call_id
            role = ROLES.get(message.type)
            if isinstance(message, ChatMessage):
                role = next((r for r in ROLES.values() if r == message.role), None)
            turns.append({"owner": self.owner, "session_id": self.session_id,
                          "speaker": self._speaker(message), "role": role, "text": text,
                          "timestamp": now + timedelta(microseconds=len(turns)),
                          "metadata": metadata})
        if turns:
            self._last = now + timedelta(microseconds=len(turns) - 1)
        return turns

    def _message(self, m: Message) -> BaseMessage:
        default = {"user": self.user_speaker, "assistant": self.ai_speaker}.get(m.role or "",
                                                                              m.role)
        name = None if m.speaker == default else m.speaker
        if m.role == "user":
            return HumanMessage(content=m.text, id=m.id, name=name)
        if m.role == "assistant":
            return AIMessage(content=m.text, id=m.id, name=name)
        if m.role == "system":
            return SystemMessage(content=m.text, id=m.id, name=name)
        if m.role == "tool":
            return ToolMessage(content=m.text, id=m.id, name=name,
                               tool_call_id=str(m.metadata.get("tool_call_id") or ""))
        return ChatMessage(content=m.text, id=m.id, role=m.speaker)

    # sync

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages in order (event time), read back from graphmem."""
        gm = self.client
        if not isinstance(gm, GraphMem):
            raise _async_only("messages")
        out: list[BaseMessage] = []
        while True:
            page = gm.session_messages(self.session_id, owner=self.owner, skip=len(out),
                                       limit=PAGE)
            out.extend(self._message(m) for m in page)
            if len(page) < PAGE:
                return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages as turns of the session; returns once committed."""
        gm = self.client
        if not isinstance(gm, GraphMem):
            raise _async_only("add_messages")
        turns = self._turns(messages)
        for start in range(0, len(turns), MAX_BATCH):
            gm.add_messages(turns[start:start + MAX_BATCH])

    def clear(self) -> None:
        """Forget the session: its messages and what rests only on them."""
        gm = self.client
        if not isinstance(gm, GraphMem):
            raise _async_only("clear")
        with suppress(NotFoundError):  # nothing stored yet: nothing to forget
            gm.forget_session(self.session_id, owner=self.owner)

    # async

    async def aget_messages(self) -> list[BaseMessage]:
        """The session's messages in order, read back from graphmem."""
        gm = self.client
        if not isinstance(gm, AsyncGraphMem):
            return await super().aget_messages()
        out: list[BaseMessage] = []
        while True:
            page = await gm.session_messages(self.session_id, owner=self.owner,
                                             skip=len(out), limit=PAGE)
            out.extend(self._message(m) for m in page)
            if len(page) < PAGE:
                return out

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages as turns of the session; returns once committed."""
        gm = self.client
        if not isinstance(gm, AsyncGraphMem):
            return await super().aadd_messages(messages)
        turns = self._turns(messages)
        for start in range(0, len(turns), MAX_BATCH):
            await gm.add_messages(turns[start:start + MAX_BATCH])

    async def aclear(self) -> None:
        """Forget the session: its messages and what rests only on them."""
        gm = self.client
        if not isinstance(gm, AsyncGraphMem):
            return await super().aclear()
        with suppress(NotFoundError):
            await gm.forget_session(self.session_id, owner=self.owner)
