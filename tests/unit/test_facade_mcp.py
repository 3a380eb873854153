"""The MCP server's definition without a database: its tools as a model reads them, and every
anticipated error (graphmem's own, invalid arguments) turned into a tool error (``isError``)."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import MagicMock

from mcp import Client

from graphmem.errors import InvalidInput, NotFound, StoreUnavailable
from graphmem.mcp.errors import describe
from graphmem.mcp.tools import build_server


def call(tm: Any, name: str, args: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(build_server(lambda _: tm, tools="all")) as client:
            return await client.call_tool(name, args)

    return asyncio.run(main())


def text(result: Any) -> str:
    assert result.is_error
    return " ".join(c.text for c in result.content)


def test_tools_describe_themselves_for_a_model() -> None:
    async def main() -> Any:
        async with Client(build_server(lambda _: MagicMock(), tools="all")) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in asyncio.run(main())}
    assert "forget_owner" in tools and tools["forget_owner"].annotations.destructive_hint
    for name in ("forget_message", "forget_fact", "forget_session"):
        assert tools[name].annotations.destructive_hint, name
    assert tools["search_memory"].annotations.read_only_hint
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
    as_of = tools["query_facts"].input_schema["properties"]["as_of"]
    assert "offset" in str(as_of)  # the datetime rule, told to the model
    units = tools["search_memory"].input_schema["properties"]["units"]
    assert set(units["enum"]) == {"messages", "observations", "both", "episodes", "chunks"}


def test_graphmem_errors_become_tool_errors() -> None:
    tm = MagicMock()
    tm.facts.history.side_effect = NotFound("no fact 'x'")
    assert text(call(tm, "fact_history", {"fact_id": "x"})).endswith("not found: no fact 'x'")
    tm.messages.ingest.side_effect = InvalidInput("messages[0].text", "too long")
    turn = {"owner": "a", "session_id": "s", "speaker": "a", "text": "hi",
            "timestamp": "2026-01-01T00:00:00Z"}  # valid for the tool: ingest refuses it
    assert "messages[0].text: too long" in text(call(tm, "add_messages", {"messages": [turn]}))
    tm.profile.get.side_effect = StoreUnavailable("bolt://10.0.0.5:7687 refused")
    message = text(call(tm, "get_profile", {"owner": "a"}))
    assert "unreachable" in message and "10.0.0.5" not in message


def test_invalid_arguments_name_the_field() -> None:
    tm = MagicMock()
    assert "k" in text(call(tm, "search_memory", {"query": "q", "owner": "a", "k": 0}))
    assert "owner" in text(call(tm, "search_memory", {"query": "q"}))
    assert "as_of" in text(call(tm, "query_facts", {"owner": "a", "as_of": "2026-01-01"}))
    tm.search.assert_not_called()


def test_describe_names_the_field() -> None:
    assert describe(InvalidInput("ops[2].value", "ADD needs a value")) == \
        "invalid input: ops[2].value: ADD needs a value"
