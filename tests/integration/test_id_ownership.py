"""Ids are names in a tenant, and a key limited to some owners learns nothing of the others
through them: an id it chooses that another owner holds is refused (409, ``field`` naming the
item's id) with the very answer it gets for an id its own owner holds with other content; an id
of the forms graphmem derives from content is accepted from it only for the same content, so
another owner's derived id (which would confirm what that owner said) is refused exactly as a
derived-looking id that names nothing. Every write path that takes ids, over HTTP and MCP; a new
kind of write adds its row to `WRITES`."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from graphmem.access import Access
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner
from tests.integration.test_mcp import ONE_OWNER, mcp_url, over_http

__all__ = ["mcp_url"]


def _message(who: str, id_: str | None, text: str) -> dict[str, Any]:
    m = msg(0, who, session="ids", text=text)
    if id_ is None:
        del m["id"]
    else:
        m["id"] = id_
    return m


def _observation(who: str, id_: str | None, text: str) -> dict[str, Any]:
    o = {"owner": who, "subject": "the spare key", "type": "place", "content": text}
    return o if id_ is None else {**o, "id": id_}


def _trace(who: str, id_: str | None, text: str) -> dict[str, Any]:
    t = {"owner": who, "started_at": "2026-03-01T10:00:00Z",
         "messages": [{"role": "user", "content": text}]}
    return t if id_ is None else {**t, "id": id_}


Item = Callable[[str, str | None, str], dict[str, Any]]
WRITES: dict[str, tuple[str, Item, str]] = {
    "messages": ("/v1/messages", _message, "m-"),
    "observations": ("/v1/observations", _observation, "o-"),
    "traces": ("/v1/traces", _trace, "tr-"),
}
"""List name -> (route, item builder, the prefix of the ids graphmem derives for it).
Documents have no row: a document takes no id (its versions' ids are derived from the owner and
the key, and a key is per owner); `test_a_document_takes_no_id_and_keys_are_per_owner`."""


@pytest.fixture
def keyed(settings: Settings, memory: Memory, tenant: str) -> Iterator[dict[str, Any]]:
    from graphmem.api.app import create_app

    alice, bob = owner(), owner()
    grants: dict[str, str | Access] = {
        "full": tenant, "alice": Access(tenant=tenant, owners=frozenset({alice}))}
    s = settings.model_copy(update={"api_keys": {hash_api_key(k): g for k, g in grants.items()}})
    with TestClient(create_app(s, memory)) as client:
        yield {"client": client, "alice": alice, "bob": bob}
        for who in (alice, bob):
            memory.for_tenant(tenant).messages.forget_owner(who)


def _post(c: TestClient, name: str, key: str, item: dict[str, Any]) -> Any:
    route = WRITES[name][0]
    return c.post(route, json={name: [item]}, headers=auth(key))


def _stored_ids(c: TestClient, name: str, item: dict[str, Any]) -> str:
    r = _post(c, name, "full", item)
    assert r.status_code == 201, r.text
    body = r.json()
    ids: list[str] = body["ids"] if isinstance(body, dict) else [w["id"] for w in body]
    return ids[0]


@pytest.mark.parametrize("name", list(WRITES))
def test_another_owners_id_is_refused_as_ones_own(keyed: dict[str, Any], name: str) -> None:
    c, alice, bob = keyed["client"], keyed["alice"], keyed["bob"]
    make = WRITES[name][1]
    theirs, mine = f"{name}-{uuid.uuid4().hex}", f"{name}-{uuid.uuid4().hex}"
    _stored_ids(c, name, make(bob, theirs, "bob keeps the spare key under the mat"))
    _stored_ids(c, name, make(alice, mine, "alice keeps the spare key in the drawer"))

    other = _post(c, name, "alice", make(alice, theirs, "something else"))
    own = _post(c, name, "alice", make(alice, mine, "something else"))
    assert other.status_code == own.status_code == 409, (other.text, own.text)
    assert other.json()["field"] == own.json()["field"] == f"{name}[0].id"
    assert other.json() == {**own.json(), "detail": own.json()["detail"].replace(mine, theirs)}
    assert "bob" not in other.text and bob not in other.text


@pytest.mark.parametrize("name", list(WRITES))
def test_another_owners_derived_id_tells_nothing(keyed: dict[str, Any], name: str) -> None:
    """Bob's item sent without an id gets one derived from his content; alice naming it is
    refused exactly as a derived-looking id that names nothing."""
    c, alice, bob = keyed["client"], keyed["alice"], keyed["bob"]
    make, prefix = WRITES[name][1], WRITES[name][2]
    derived = _stored_ids(c, name, make(bob, None, "bob keeps the spare key under the mat"))
    assert derived.startswith(prefix)
    nothing = prefix + uuid.uuid4().hex

    guess = _post(c, name, "alice", make(alice, derived, "a guess"))
    blank = _post(c, name, "alice", make(alice, nothing, "a guess"))
    assert guess.status_code == blank.status_code == 422, (guess.text, blank.text)
    assert guess.json() == blank.json()
    assert guess.json()["field"] == f"{name}[0].id"


def test_an_owners_own_derived_ids_still_make_retries_idempotent(keyed: dict[str, Any]) -> None:
    c, alice = keyed["client"], keyed["alice"]
    for name in ("messages", "traces"):  # an observation's id waits for its sources' times
        make = WRITES[name][1]
        first = _post(c, name, "alice", make(alice, None, "alice keeps the key in the drawer"))
        assert first.status_code == 201, first.text
        derived = first.json()["ids"][0]
        again = _post(c, name, "alice", make(alice, derived, "alice keeps the key in the drawer"))
        assert again.status_code == 201 and again.json()["duplicates"] == 1, again.text


def test_a_document_takes_no_id_and_keys_are_per_owner(keyed: dict[str, Any]) -> None:
    """Alice using bob's document key stores her own document (another id); a document sent
    with an id is refused as any unknown field is, whoever's id it names."""
    c, alice, bob = keyed["client"], keyed["alice"], keyed["bob"]

    def doc(who: str, text: str, **extra: Any) -> dict[str, Any]:
        return {"owner": who, "key": "keys/spare.md", "content": text, **extra}

    theirs = c.post("/v1/documents", json=doc(bob, "Bob keeps the spare key under the mat."),
                    headers=auth("full"))
    assert theirs.status_code == 201, theirs.text
    mine = c.post("/v1/documents", json=doc(alice, "Alice keeps it in the drawer."),
                  headers=auth("alice"))
    assert mine.status_code == 201 and mine.json()["action"] == "created", mine.text
    assert mine.json()["id"] != theirs.json()["id"]
    named = c.post("/v1/documents", json=doc(alice, "else", id=theirs.json()["id"]),
                   headers=auth("alice"))
    nothing = c.post("/v1/documents", json=doc(alice, "else", id="d-nothing-v1"),
                     headers=auth("alice"))
    assert named.status_code == nothing.status_code == 422
    assert named.json()["field"] == nothing.json()["field"] == "id"
    assert bob not in named.text
    again = c.get(f"/v1/documents/{mine.json()['id']}", params={"with_text": "true"},
                  headers=auth("alice")).json()
    assert again["text"] == "Alice keeps it in the drawer." and len(again["versions"]) == 1


TOOLS = {"messages": ("add_messages", "m-"), "observations": ("record_facts", "o-"),
         "traces": ("add_traces", "tr-")}
"""List name -> (the MCP tool that writes it, the prefix of derived ids)."""


def _mcp_ids(result: Any) -> list[str]:
    data = result.structured_content
    rows = data["result"] if isinstance(data, dict) and "result" in data else data
    return list(rows["ids"]) if isinstance(rows, dict) else [r["id"] for r in rows]


@pytest.mark.parametrize("name", list(TOOLS))
def test_over_mcp_another_owners_ids_tell_nothing(mcp_url: str, name: str) -> None:
    tool, prefix = TOOLS[name]
    make = WRITES[name][1]
    bob = owner()
    theirs, mine = f"mcp-{uuid.uuid4().hex}", f"mcp-{uuid.uuid4().hex}"

    async def store(client: Client) -> Any:
        return await client.call_tool(tool, {name: [
            make(bob, theirs, "bob's turn"), make(bob, None, "bob's other turn"),
            make(ONE_OWNER, mine, "my turn")]})

    stored = over_http(mcp_url, "key-a", store)
    assert not stored.is_error, stored
    derived = _mcp_ids(stored)[1]
    assert derived.startswith(prefix)

    def send(id_: str) -> str:
        async def work(client: Client) -> Any:
            return await client.call_tool(tool, {name: [make(ONE_OWNER, id_, "else")]})

        result = over_http(mcp_url, "key-a-one-owner", work)
        assert result.is_error
        text: str = result.content[0].text
        return text

    assert send(theirs) == send(mine).replace(mine, theirs)
    assert "already in use" in send(theirs)
    assert send(derived) == send(prefix + uuid.uuid4().hex)
