"""What MCP over HTTP refuses, and how it says so, with the SDK's own client on the real API and
Neo4j: a read-only key is offered the read tools only (as a read-only stdio server is) and a
write tool is unknown to it; a resource of an owner the key may not use is a refusal naming the
field, not an internal error; a Host or Origin the server does not answer to is a problem+json
body, like every other HTTP error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from graphmem.access import Access
from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.models import MessageIn
from graphmem.operations import WRITE_TOOLS
from graphmem.service import Memory
from tests.integration.helpers import msg, owner
from tests.integration.test_mcp import TOOLS, data, error_text, over_http
from tests.support.live_server import serve

ALICE = "mcp-refusals-alice"
KEYS: dict[str, str | Access] = {
    "key-a": "tenant-a",
    "key-a-read-only": Access(tenant="tenant-a", read_only=True),
    "key-a-alice": Access(tenant="tenant-a", owners=frozenset({ALICE})),
}
STREAMS = "application/json, text/event-stream"
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.fixture(scope="module")
def mcp_url(settings: Settings, memory: Memory) -> Iterator[str]:
    """The real API (with /mcp) under uvicorn on a loopback port, so the SDK checks the Host and
    Origin of each request (DNS rebinding protection)."""
    s = settings.model_copy(update={
        "api_keys": {hash_api_key(k): grant for k, grant in KEYS.items()}, "host": "127.0.0.1",
        "mcp_tools": "all"})
    with serve(create_app(s, memory)) as url:
        yield f"{url}/mcp"


def test_a_read_only_key_is_offered_the_read_tools_only(mcp_url: str) -> None:
    who = owner()

    async def work(client: Client) -> dict[str, Any]:
        return {
            "tools": {t.name for t in (await client.list_tools()).tools},
            "add": await client.call_tool("add_messages", {"messages": [msg(0, who)]}),
            "forget": await client.call_tool("forget_owner", {"owner": who}),
            "bad_add": await client.call_tool("add_messages", {"messages": "not a list"}),
            "search": data(await client.call_tool("search_memory", {"query": "x",
                                                                     "owner": who})),
        }

    out = over_http(mcp_url, "key-a-read-only", work)
    assert out["tools"] == TOOLS - WRITE_TOOLS
    for name in ("add", "forget", "bad_add"):  # unknown, whatever the arguments
        assert "Unknown tool" in error_text(out[name]), out[name]
    assert out["search"].get("hits", []) == []

    async def listing(client: Client) -> set[str]:
        return {t.name for t in (await client.list_tools()).tools}

    assert over_http(mcp_url, "key-a", listing) == TOOLS  # the same server, another key


def test_a_resource_of_another_owner_is_a_refusal(mcp_url: str, memory: Memory) -> None:
    other = owner()
    tm = memory.for_tenant("tenant-a")
    tm.messages.ingest([MessageIn(**msg(0, ALICE, text="The boat leaves at nine.")),
                        MessageIn(**msg(0, other, text="The train leaves at ten."))])

    async def work(client: Client) -> dict[str, Any]:
        own = await client.read_resource(f"graphmem://sessions/s1/messages?owner={ALICE}")
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"graphmem://sessions/s1/messages?owner={other}")
        return {"own": own.contents[0].text, "refused": refused.value}

    try:
        out = over_http(mcp_url, "key-a-alice", work)
    finally:
        for o in (ALICE, other):
            tm.messages.forget_owner(o)
    assert "The boat leaves at nine." in out["own"]
    refused: MCPError = out["refused"]
    assert refused.code == INVALID_PARAMS, refused.error
    assert refused.message == f"forbidden: owner: this key may not use owner {other!r}"
    assert refused.data == {"uri": f"graphmem://sessions/s1/messages?owner={other}",
                            "status": 403, "field": "owner"}


def assert_problem(r: httpx.Response, status: int, field: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json", r.headers
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and body["field"] == field, body
    return body


def test_a_host_or_origin_the_server_does_not_answer_to_is_a_problem(mcp_url: str) -> None:
    key = {"Authorization": "Bearer key-a", "Accept": STREAMS}
    host = httpx.post(mcp_url, json=LIST_TOOLS, headers={**key, "Host": "evil.example"})
    body = assert_problem(host, 421, "Host")
    assert body["title"] == "misdirected request"
    assert "Host" in body["detail"] and "evil.example" in body["detail"]
    origin = httpx.post(mcp_url, json=LIST_TOOLS,
                        headers={**key, "Origin": "http://evil.example"})
    assert "http://evil.example" in assert_problem(origin, 403, "Origin")["detail"]
    fine = httpx.post(mcp_url, json=LIST_TOOLS, headers=key)
    assert fine.status_code == 200, fine.text  # the server answers its own host
