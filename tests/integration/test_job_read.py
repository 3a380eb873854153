"""`GET /v1/jobs/{id}`: one job of the caller's tenant (and, for a key limited to some owners,
of its owners), as the job list shows it; anything else is an unknown id (404)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi.testclient import TestClient

from graphmem.access import Access
from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from tests.integration.conftest import auth
from tests.integration.helpers import msg, owner


def test_one_job_is_read_by_its_id(settings: Settings, memory: Memory, tenant: str) -> None:
    alice, bob = owner(), owner()
    grants: dict[str, str | Access] = {
        "full": tenant, "other-tenant": f"{tenant}-x",
        "alice": Access(tenant=tenant, owners=frozenset({alice})),
        "read": Access(tenant=tenant, read_only=True),
    }
    s = settings.model_copy(update={"api_keys": {hash_api_key(k): g for k, g in grants.items()}})
    with TestClient(create_app(s, memory)) as c:
        try:
            for who in (alice, bob):
                body = {"messages": [msg(0, who, session="chat/1")]}
                assert c.post("/v1/messages", json=body, headers=auth("full")).status_code == 201
            listed = {who: c.get("/v1/jobs", params={"owner": who},
                                 headers=auth("full")).json()["jobs"][0] for who in (alice, bob)}
            mine = listed[alice]
            for key in ("full", "read", "alice"):
                got = c.get(f"/v1/jobs/{quote(mine['id'], safe='')}", headers=auth(key))
                assert got.status_code == 200, (key, got.text)
                assert got.json() == mine
            unknown = c.get(f"/v1/jobs/{quote(listed[bob]['id'], safe='')}",
                            headers=auth("alice"))  # another owner's job, for alice's key
            assert unknown.status_code == 404
            assert unknown.headers["content-type"].startswith("application/problem+json")
            assert c.get(f"/v1/jobs/{quote(mine['id'], safe='')}",
                         headers=auth("other-tenant")).status_code == 404
            assert c.get("/v1/jobs/no-such-job", headers=auth("full")).status_code == 404
        finally:
            for who in (alice, bob):
                memory.for_tenant(tenant).messages.forget_owner(who)
