"""One request cannot freeze the server: a list longer than its bound is refused before any of
its items is validated, on every surface (HTTP, MCP over HTTP, the Python client), and a
problem lists at most `MAX_ERRORS` errors and counts them all. Each case answers fast and small;
nothing is written."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from graphmem.client import GraphMem, InvalidInputError
from graphmem.wire import MAX_BATCH, MAX_ERRORS, MAX_OBSERVATIONS, MAX_TRACES
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner
from tests.integration.test_mcp import mcp_url, over_http

__all__ = ["mcp_url"]  # the served API of test_mcp, shared

FAST_S = 5.0  # a refused list answers well within this, on a loaded 2-core machine
SMALL = 20_000  # bytes of a refusal


def _timed_post(api: TestClient, path: str, body: bytes) -> tuple[Any, float]:
    started = time.monotonic()
    r = api.post(path, content=body, headers={**auth(), "Content-Type": "application/json"})
    return r, time.monotonic() - started


def _small_refusal(r: Any, elapsed: float, field: str) -> dict[str, Any]:
    assert r.status_code in (413, 422), r.text[:500]
    assert len(r.content) < SMALL, len(r.content)
    assert elapsed < FAST_S, elapsed
    body: dict[str, Any] = r.json()
    assert body["field"] == field, body
    return body


@pytest.mark.parametrize(("path", "name", "bound"), [
    ("/v1/messages", "messages", MAX_BATCH),
    ("/v1/observations", "observations", MAX_OBSERVATIONS),
    ("/v1/profile/ops", "ops", MAX_OBSERVATIONS),
    ("/v1/traces", "traces", MAX_TRACES),
])
def test_a_million_empty_items_are_refused_fast(
    api: TestClient, path: str, name: str, bound: int,
) -> None:
    """The 3 MB body of the report: a million `{}` on each list endpoint."""
    body = (f'{{"{name}": [' + ",".join(["{}"] * 1_000_000) + "]}").encode()
    assert len(body) > 3_000_000
    refused = _small_refusal(*_timed_post(api, path, body), name)
    assert f"at most {bound}" in refused["detail"], refused


def test_nineteen_megabytes_of_integers_are_refused_fast(api: TestClient) -> None:
    body = ('{"messages": [' + ",".join(["1"] * 9_500_000) + "]}").encode()
    assert 19_000_000 < len(body) < 20_000_000  # within the body limit: the list bound refuses
    _small_refusal(*_timed_post(api, "/v1/messages", body), "messages")


def test_a_full_batch_of_bad_items_lists_the_first_errors_and_counts_them(
    api: TestClient, cypher: Any,
) -> None:
    who = owner()
    bad = [{**msg(i, who), "timestamp": "yesterday", "colour": "red"} for i in range(MAX_BATCH)]
    r, elapsed = _timed_post(api, "/v1/messages", json.dumps({"messages": bad}).encode())
    body = _small_refusal(r, elapsed, "messages[0].timestamp")
    assert r.status_code == 422
    assert len(body["errors"]) == MAX_ERRORS
    assert body["error_count"] == 2 * MAX_BATCH
    assert f"and {2 * MAX_BATCH - MAX_ERRORS} more errors" in body["detail"]
    assert cypher("MATCH (m:Message {owner: $o}) RETURN count(m) AS n", o=who)[0]["n"] == 0


def test_many_metadata_keys_are_refused(api: TestClient) -> None:
    m = msg(0, owner(), metadata={f"k{i}": i for i in range(100_000)})
    r, elapsed = _timed_post(api, "/v1/messages", json.dumps({"messages": [m]}).encode())
    body = _small_refusal(r, elapsed, "messages[0].metadata")
    assert "at most 64" in body["detail"]


def test_the_client_refuses_an_endless_list_before_sending() -> None:
    def endless() -> Iterator[dict[str, Any]]:
        while True:
            yield {}

    client = GraphMem("http://127.0.0.1:9", api_key="unused")  # nothing listens: nothing sent
    started = time.monotonic()
    with pytest.raises(InvalidInputError) as refused:
        client.add_messages(endless())
    assert time.monotonic() - started < FAST_S
    assert refused.value.field == "messages"
    assert f"at most {MAX_BATCH}" in str(refused.value)
    with pytest.raises(InvalidInputError) as many:
        client.add_messages([{"owner": "x"}] * MAX_BATCH)
    assert many.value.body is not None
    assert len(many.value.body.errors) == MAX_ERRORS
    assert many.value.body.error_count == 4 * MAX_BATCH  # session, speaker, text, timestamp


def test_mcp_add_messages_refuses_a_long_list_fast_and_small(mcp_url: str) -> None:
    async def work(client: Client) -> Any:
        return await client.call_tool("add_messages", {"messages": [{}] * 100_000})

    started = time.monotonic()
    result = over_http(mcp_url, "key-a", work)
    assert time.monotonic() - started < FAST_S + 5
    assert result.is_error
    text = result.content[0].text
    assert len(text) < SMALL, len(text)
    assert "messages" in text and f"at most {MAX_BATCH}" in text


def test_mcp_names_bad_arguments_as_the_api_does_and_counts_them(mcp_url: str) -> None:
    async def work(client: Client) -> Any:
        return await client.call_tool("add_messages", {"messages": [{}] * MAX_BATCH})

    result = over_http(mcp_url, "key-a", work)
    text = result.content[0].text
    assert result.is_error and len(text) < SMALL, len(text)
    assert text.startswith("invalid input: messages[0].owner: Field required; ")
    assert f"(and {5 * MAX_BATCH - MAX_ERRORS} more errors)" in text
    assert "errors.pydantic.dev" not in text
