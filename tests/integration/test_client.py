"""The Python client against the real server (uvicorn over the real Neo4j): every operation once
through `GraphMem` (the test fails if an endpoint of `calls.ENDPOINTS` is left out), the error
tree on real answers, and the main path through `AsyncGraphMem`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import date
from typing import Any, TypeVar

import pytest

from graphmem.access import Access
from graphmem.api.app import create_app
from graphmem.client import (
    AsyncGraphMem,
    AuthenticationError,
    ConflictError,
    GraphMem,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    ServerError,
    TooLargeError,
    TransportError,
    calls,
)
from graphmem.config import Settings, hash_api_key
from graphmem.service import Memory
from graphmem.wire import IngestReport, Message, SearchResult
from tests.support.live_server import free_port, serve

from .helpers import msg
from .helpers import owner as new_owner
from .test_procedural import drain, run

T = TypeVar("T")
KEY = "client-key"
READER = "client-key-reading-one-owner"
TENANT = f"t-client-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def server(settings: Settings, memory: Memory) -> Iterator[str]:
    keys = {hash_api_key(KEY): TENANT,
            hash_api_key(READER): Access(tenant=TENANT, owners=frozenset({"reader-owner"}),
                                         read_only=True)}
    s = settings.model_copy(update={"api_keys": keys, "max_request_bytes": 200_000})
    with serve(create_app(s, memory)) as url:
        yield url


class Recording(GraphMem):
    """Notes which operations were called, to prove every one was."""

    called: set[str]

    def _run(self, call: calls.Call[T]) -> T:
        self.called.add(call.name)
        return super()._run(call)


def test_every_endpoint_through_the_sync_client(server: str, memory: Memory) -> None:
    o = new_owner()
    gm = Recording(server, api_key=KEY, backoff=0.01)
    gm.called = set()
    with gm:
        assert gm.health()["neo4j"] == "ok"
        assert gm.ready()["status"] == "ready"

        # messages: ids may hold "/"; a retry is stored once
        batch = [msg(0, o, "s/1", "I moved to Lisbon last month.", id=f"{o}/m0"),
                 msg(1, o, "s/1", "Lisbon has great custard tarts.", id=f"{o}/m1"),
                 {k: v for k, v in msg(2, o, "s/1", "My sister lives in Porto.").items()
                  if k != "id"}]
        report = gm.add_messages(batch)
        assert isinstance(report, IngestReport) and report.created == 3
        again = gm.add_messages(batch)
        assert (again.created, again.duplicates, again.ids) == (0, 3, report.ids)
        got = gm.get_message(f"{o}/m0")
        assert isinstance(got, Message) and got.text == "I moved to Lisbon last month."
        assert got.timestamp.tzinfo is not None
        session = gm.session_messages("s/1", owner=o, limit=10)
        assert [m.id for m in session] == report.ids
        found = gm.search("where does the user live? Lisbon", owner=o, k=3)
        assert isinstance(found, SearchResult) and f"{o}/m0" in [h.id for h in found.hits]
        context = gm.context("Where did I move?", owner=o, max_tokens=500)
        assert any(item.id == f"{o}/m0" for item in context.items)
        assert context.context_tokens <= 500
        with pytest.raises(ServerError) as no_llm:
            gm.answer("Where did I move?", owner=o)
        assert no_llm.value.status == 501  # no LLM configured on this server

        # facts, profile, audit
        writes = gm.add_observations([{"owner": o, "subject": o, "type": "lives_in",
                                       "content": "Lisbon", "sources": [f"{o}/m0"]}])
        fact_id = writes[0].id
        assert writes[0].action == "created"
        facts = gm.observations(o, type="lives_in")
        assert [f.content for f in facts] == ["Lisbon"]
        assert gm.observation_history(fact_id).facts[0].id == fact_id
        ops = gm.profile_ops([{"op": "ADD", "owner": o, "key": "city", "value": "Lisbon"}])
        assert ops[0].action == "created"
        assert [(f.type, f.content) for f in gm.profile(o)] == [("city", "Lisbon")]
        names = {a.name for a in gm.audits()}
        assert "fact_sources" in names
        rows = gm.audit("fact_sources", id=fact_id).rows
        assert [r["message_id"] for r in rows] == [f"{o}/m0"]

        # jobs and usage: formation jobs were enqueued by the ingest
        jobs = gm.jobs(limit=50)
        mine = [j for j in jobs.jobs if j.owner == o]
        assert mine and mine[0].kind == "form_session"
        assert [j.id for j in gm.jobs(owner=o).jobs] == [j.id for j in mine]
        drain(memory, TENANT)
        done = gm.jobs(state="done").jobs
        assert any(j.id == mine[0].id for j in done)
        one = gm.job(mine[0].id)
        assert (one.id, one.state, one.kind) == (mine[0].id, "done", "form_session")
        rerun = gm.rerun_job(mine[0].id)
        assert rerun.state == "pending"
        with pytest.raises(ConflictError):
            gm.rerun_job(mine[0].id)  # pending now: 409
        drain(memory, TENANT)
        usage = gm.usage(since=date(2020, 1, 1))
        assert usage.days == []
        retried = gm.retry_extraction(owner=o)  # offline formation extracts nothing to retry
        assert (retried.episodes, retried.jobs) == ([], [])

        # procedural memory
        good = ["get_order", "cancel_order"]
        traces = gm.add_traces([run(o, 1, "success", good), run(o, 2, "success", good),
                                run(o, 3, "failure", ["get_order", "refund_order"])])
        assert traces.created == 3
        drain(memory, TENANT)
        skills = gm.search_skills("cancel my order", owner=o)
        skill = skills.skills[0]
        assert [s.tool for s in skill.steps] == good
        detail = gm.skill(skill.id, limit=10)
        assert len(detail.supporting) == 2
        assert gm.skill_history(skill.id).skills[0].id == skill.id
        case = gm.case(detail.supporting[0].id)
        assert case.case.skill == skill.id and case.steps
        outcome = gm.set_outcome(traces.ids[0], "failure", detail="refund was needed")
        assert (outcome.outcome, outcome.previous) == ("failure", "success")

        # documents
        written = gm.add_document({"owner": o, "key": "notes/boat.md",
                                   "media_type": "text/markdown",
                                   "content": "# Boat\n\nThe boat leaves at nine from pier 4."})
        assert (written.key, written.version, written.action) == ("notes/boat.md", 1, "created")
        drain(memory, TENANT)
        assert [d.key for d in gm.documents(o)] == ["notes/boat.md"]
        assert gm.document(written.id, with_text=True).document.id == written.id
        found = gm.search_documents("when does the boat leave", owner=o)
        assert found.chunks and "nine" in found.chunks[0].text
        tree = gm.topics(o)  # built by the job the version enqueued
        category = [t for t in tree if t.kind == "category"]
        assert [t.documents for t in category] == [1]
        assert [(t.label, t.parent) for t in tree if t.kind == "heading"] == [
            ("Boat", category[0].id)]  # the document's own heading, under its category
        assert [m.key for m in gm.topic(category[0].id).members] == ["notes/boat.md"]
        assert gm.forget_document(written.id).kind == "document"

        # forgetting one thing, then the whole owner
        forgot = gm.forget_trace(traces.ids[2])
        assert forgot.kind == "trace" and not forgot.already_forgotten
        assert gm.forget_fact(fact_id).kind == "fact"
        first = gm.forget_message(f"{o}/m1")
        assert first.removed.get("messages") == 1
        assert gm.forget_message(f"{o}/m1").already_forgotten
        with pytest.raises(NotFoundError):
            gm.get_message(f"{o}/m1")
        gm.add_messages([msg(9, o, "later", "one more thing", id=f"{o}/later")])
        assert [(s.session_id, s.message_count) for s in gm.sessions(o)] == [
            ("later", 1), ("s/1", 2)]
        assert o in [x.owner for x in gm.owners(after=o[:-1], limit=200)]
        gm.add_messages([msg(10, o, "later", "from the mail box", id=f"{o}/mail",
                             metadata={"source": "gmail"})])
        mail = gm.forget_messages(o, metadata={"source": "gmail"})
        assert (mail.kind, mail.owner, mail.removed.get("messages")) == ("messages", o, 1)
        session = gm.forget_session("later", owner=o)
        assert (session.kind, session.id, session.owner) == ("session", "later", o)
        assert session.removed.get("messages") == 1
        page = gm.export_owner(o, limit=1)
        assert page.owner == o and len(page.records) == 1 and page.next is not None
        exported = list(gm.export_all(o, limit=3))
        kept = [r.id for r in exported if r.kind == "message"]
        assert len(kept) == 2 and f"{o}/m0" in kept
        assert len({(r.kind, r.id) for r in exported}) == len(exported)
        gone = gm.delete_owner(o)
        assert gone.owner == o and gone.messages == 2
    assert gm.called == set(calls.ENDPOINTS), set(calls.ENDPOINTS) - gm.called


def test_error_answers_of_the_real_server(server: str) -> None:
    o = new_owner()
    with GraphMem(server, api_key=KEY) as gm:
        with pytest.raises(NotFoundError) as missing:
            gm.get_message("no-such-message")
        assert missing.value.status == 404 and missing.value.body is not None

        gm.add_messages([msg(0, o, id=f"{o}-x")])
        with pytest.raises(ConflictError) as conflict:
            gm.add_messages([msg(0, o, "s1", "other text", id=f"{o}-x")])
        assert conflict.value.status == 409

        with pytest.raises(InvalidInputError) as bad:  # valid for the model, refused by the server
            gm.usage(since=date(2024, 2, 1), until=date(2024, 1, 1))
        assert bad.value.status == 422 and bad.value.field == "until"

        with pytest.raises(TooLargeError) as big:
            gm.add_messages([msg(i, o, text="word " * 10_000) for i in range(5)])
        assert big.value.status == 413 and big.value.field == "body"
        assert gm.delete_owner(o).messages == 1

    with GraphMem(server, api_key="wrong") as anon, pytest.raises(AuthenticationError) as who:
        anon.jobs()
    assert who.value.status == 401

    with GraphMem(server, api_key=READER) as reader:
        with pytest.raises(PermissionDeniedError) as other:
            reader.search("anything", owner=o)
        assert other.value.status == 403 and other.value.field == "owner"
        with pytest.raises(PermissionDeniedError) as writing:
            reader.add_messages([msg(0, "reader-owner")])
        assert writing.value.field is None and "read-only" in writing.value.detail
        assert reader.search("anything", owner="reader-owner").hits == []

    closed = f"http://127.0.0.1:{free_port()}"
    with GraphMem(closed, retries=1, backoff=0.01) as nowhere, \
            pytest.raises(TransportError) as down:
        nowhere.health()
    assert down.value.status is None


def test_the_async_client(server: str) -> None:
    o = new_owner()

    async def main() -> list[Any]:
        async with AsyncGraphMem(server, api_key=KEY) as gm:
            report = await gm.add_messages(
                [msg(i, o, "s1", f"turn {i} about the {w}") for i, w in
                 enumerate(["garden", "piano", "harbour", "garden party"])])
            assert report.created == 4
            assert [m.id for m in await gm.session_messages("s1", owner=o)] == report.ids
            results = await asyncio.gather(
                gm.search("garden", owner=o, k=2), gm.search("piano", owner=o, k=1),
                gm.context("the harbour", owner=o))
            with pytest.raises(NotFoundError):
                await gm.get_message("missing")
            exported = [r.id async for r in gm.export_all(o, limit=2) if r.kind == "message"]
            assert exported == sorted(report.ids)
            assert (await gm.delete_owner(o)).messages == 4
            return list(results)

    garden, piano, harbour = asyncio.run(main())
    assert any("garden" in h.text for h in garden.hits if h.nucleus)
    assert any("piano" in h.text for h in piano.hits if h.nucleus)
    assert any("harbour" in i.text for i in harbour.items)
