"""The MCP server fits in an agent's context: by default six tools (`CORE_TOOLS`) whose listing
(names, descriptions, input and output schemas) counts under 1,500 tokens, descriptions dedented
and short, results compact (no nulls, no empty lists, rounded scores), and a prompt that tells an
agent how to use its memory.

Tokens are counted with OpenAI's cl100k_base BPE (the `bpe-openai` package carries its tables,
so nothing is downloaded), over the listing as a client receives it, in compact JSON."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest.mock import MagicMock

import bpe_openai
from mcp import Client

from graphmem.mcp.tools import build_server, compact
from graphmem.operations import CORE_TOOLS, TOOLS, WRITE_TOOLS

BUDGET = 1500


def _listing(**options: Any) -> list[Any]:
    async def main() -> list[Any]:
        async with Client(build_server(lambda _: MagicMock(), **options)) as client:
            return list((await client.list_tools()).tools)

    return asyncio.run(main())


def _tokens(text: str) -> int:
    return len(bpe_openai.get_encoding("cl100k_base").encode(text))


def test_the_default_server_offers_the_core_tools_only() -> None:
    core = _listing()
    assert {t.name for t in core} == CORE_TOOLS
    assert len(CORE_TOOLS) <= 6
    assert {t.name for t in _listing(tools="all")} == {t.name for t in TOOLS}
    read_only = {t.name for t in _listing(read_only=True)}
    assert read_only == CORE_TOOLS - WRITE_TOOLS


def test_the_core_listing_is_under_its_token_budget() -> None:
    listing = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in _listing()]
    text = json.dumps(listing, separators=(",", ":"))
    counted = _tokens(text)
    print(f"core tools: {counted} tokens, {len(text)} characters")
    assert counted < BUDGET, counted
    assert len(text) / 4 < BUDGET  # and by the rule of thumb of 4 characters a token


def test_descriptions_are_dedented_and_short() -> None:
    for tool in _listing(tools="all"):
        assert tool.description and not any(
            line.startswith(" ") for line in tool.description.splitlines()), tool.name
    for tool in _listing():
        assert len(tool.description) <= 400, (tool.name, len(tool.description))


def test_results_are_compact() -> None:
    value = {"score": 0.123456789, "hits": [], "facts": [{"valid_to": None, "id": "f1"}],
             "nested": {"empty": {}}, "n": 3, "text": "", "ok": False}
    assert compact(value) == {"score": 0.123, "facts": [{"id": "f1"}], "n": 3, "text": "",
                              "ok": False}


def test_a_prompt_tells_an_agent_how_to_use_its_memory() -> None:
    async def main() -> Any:
        async with Client(build_server(lambda _: MagicMock())) as client:
            prompts = (await client.list_prompts()).prompts
            return prompts, await client.get_prompt("use_memory")

    prompts, got = asyncio.run(main())
    assert [p.name for p in prompts] == ["use_memory"]
    text = got.messages[0].content.text
    for tool in CORE_TOOLS:
        assert tool in text, tool
