"""`TenantMemory`, the one front door: every call is bound to its tenant, and no HTTP route
module reaches around it to the store."""

from __future__ import annotations

import ast
import functools
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import pytest

from graphmem.access import Access
from graphmem.errors import Forbidden, InvalidInput, NotFound
from graphmem.facts.models import ObservationIn, ProfileOp
from graphmem.models import (
    AuditResult,
    ContextRequest,
    ExtractionRetryIn,
    ForgetMessages,
    MessageIn,
    SearchRequest,
)
from graphmem.procedural.models import SkillSearch, TraceIn
from graphmem.tenant_memory import TenantMemory


class OpsOnMock:
    """`TenantOps` over a mock `Memory`: each operation is the mock's method of the same name
    with the tenant first, so a test reads which tenant-bound call the facade made."""

    def __init__(self, parts: Any, tenant: str) -> None:
        self._parts, self.tenant = parts, tenant
        self.stores = tenant  # stands for the tenant's stores, which the services are given

    def __getattr__(self, name: str) -> Any:
        return functools.partial(getattr(self._parts, name), self.tenant)


@pytest.fixture(autouse=True)
def ops_on_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphmem.tenant_memory.TenantOps", OpsOnMock)

API = Path(__file__).resolve().parents[2] / "api"


@pytest.mark.parametrize("path", sorted(API.glob("*.py")), ids=lambda p: p.name)
def test_no_route_module_reaches_the_store(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith(("graphmem.store", "store")), \
                f"{path.name}:{node.lineno} imports {node.module}"
            assert "store" not in {a.name for a in node.names} or node.module != "graphmem", \
                f"{path.name}:{node.lineno}"
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("graphmem.store") for a in node.names), \
                f"{path.name}:{node.lineno}"
        if isinstance(node, ast.Attribute):
            assert node.attr != "store", f"{path.name}:{node.lineno} uses .store"


def test_every_call_is_bound_to_the_tenant() -> None:
    mem = MagicMock()
    tm = TenantMemory(mem, "acme")
    t = datetime(2026, 1, 1, tzinfo=UTC)
    req = SearchRequest(query="q", owner="alice")
    tm.messages.ingest([])
    mem.ingest_messages.assert_called_once_with("acme", [], None)
    tm.messages.get("m1")
    mem.get_message.assert_called_once_with("acme", "m1")
    tm.messages.session("s1", "alice", 5, 10)
    mem.session_messages.assert_called_once_with("acme", "s1", "alice", 5, 10)
    tm.messages.forget_owner("alice")
    mem.delete_owner.assert_called_once_with("acme", "alice")
    tm.export("alice", "message:m1", 7)
    mem.export_owner.assert_called_once_with("acme", "alice", "message:m1", 7)
    tm.messages.forget("m1")
    mem.forget_message.assert_called_once_with("acme", "m1", None)
    tm.messages.owners("a", 5)
    mem.owners.assert_called_once_with("acme", "a", 5, None)
    tm.messages.sessions("alice", 2, 3)
    mem.sessions.assert_called_once_with("acme", "alice", 2, 3)
    tm.messages.forget_session("alice", "s1")
    mem.forget_session.assert_called_once_with("acme", "alice", "s1", None)
    forget = ForgetMessages(owner="alice", session_id="s1")
    tm.messages.forget_matching(forget)
    mem.forget_matching.assert_called_once_with("acme", forget, None)
    tm.search(req)
    mem.search_units.assert_called_once_with("acme", req, None, timings=None)
    tm.facts.query("alice", as_of=t)
    mem.facts.query.assert_called_once_with("acme", "observation", "alice", None, None, t, None,
                                            False)
    tm.facts.history("f1")
    mem.facts.history.assert_called_once_with("acme", "f1")
    tm.profile.get("alice", known_at=t)
    mem.facts.query.assert_called_with("acme", "profile", "alice", None, None, None, t, False)
    tm.profile.apply([])
    mem.facts.profile_ops.assert_called_once_with("acme", [], None, None)
    tm.jobs.rerun("j1")
    mem.jobs.rerun.assert_called_once_with("acme", "j1")
    tm.usage(date(2026, 1, 1))
    mem.llm_usage.assert_called_once_with("acme", date(2026, 1, 1), None)
    tm.skills.get("s1")
    mem.procedural.skill.assert_called_once_with("acme", "s1", 50, None, None)
    tm.cases.get("c1")
    mem.procedural.case.assert_called_once_with("acme", "c1")
    tm.traces.forget("t1")
    mem.forget_trace.assert_called_once_with("acme", "t1", None)


def test_audit_runs_for_the_tenant_only() -> None:
    mem = MagicMock()
    mem.store.run.return_value = [{"content": "r1"}]
    result = TenantMemory(mem, "acme").audit.run(
        "true_at", {"owner": "alice", "t": "2026-03-15T12:00:00Z", "tenant": "other"})
    assert result == AuditResult(name="true_at", rows=[{"content": "r1"}])
    name, params = mem.store.run.call_args.args[0], mem.store.run.call_args.kwargs
    assert name == "audit/true_at"
    assert params["tenant"] == "acme"
    assert params["t"] == datetime(2026, 3, 15, 12, tzinfo=UTC)
    assert {q.name for q in TenantMemory(mem, "acme").audit.queries()} >= {"true_at"}


@pytest.mark.parametrize("name", ["", "x" * 201])
def test_a_tenant_needs_a_name(name: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        TenantMemory(MagicMock(), name)
    assert exc.value.field == "tenant"


BOB = "bob"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _limited(**grant: object) -> tuple[MagicMock, TenantMemory]:
    mem = MagicMock()
    return mem, TenantMemory(mem, "acme", Access(tenant="acme", **grant))  # type: ignore[arg-type]


def _refusals(tm: TenantMemory) -> dict[str, object]:
    """Every facade call that names the owner ``bob``, unmade."""
    message = MessageIn(owner=BOB, session_id="s", speaker="b", text="x", timestamp=T0)
    trace = TraceIn(owner=BOB, started_at=T0, messages=[{"role": "user", "content": "x"}])
    return {
        "ingest": lambda: tm.messages.ingest([message]),
        "sessions": lambda: tm.messages.sessions(BOB),
        "session": lambda: tm.messages.session("s", BOB),
        "forget_session": lambda: tm.messages.forget_session(BOB, "s"),
        "forget_matching": lambda: tm.messages.forget_matching(
            ForgetMessages(owner=BOB, session_id="s")),
        "forget_owner": lambda: tm.messages.forget_owner(BOB),
        "search": lambda: tm.search(SearchRequest(query="q", owner=BOB)),
        "context": lambda: tm.context(ContextRequest(query="q", owner=BOB)),
        "export": lambda: tm.export(BOB),
        "observe": lambda: tm.facts.observe([ObservationIn(owner=BOB, subject="s", type="t",
                                                           content="c")]),
        "query": lambda: tm.facts.query(BOB),
        "profile_apply": lambda: tm.profile.apply([ProfileOp(op="ADD", owner=BOB, key="k",
                                                             value="v")]),
        "profile_get": lambda: tm.profile.get(BOB),
        "episodes": lambda: tm.episodes.search("q", BOB),
        "traces": lambda: tm.traces.ingest([trace]),
        "skills": lambda: tm.skills.search(SkillSearch(query="q", owner=BOB)),
        "retry": lambda: tm.jobs.retry_extraction(ExtractionRetryIn(owner=BOB)),
        "jobs": lambda: tm.jobs.list(owner=BOB),
        "audit": lambda: tm.audit.run("true_at", {"owner": BOB, "t": "2026-03-15T12:00:00Z"}),
    }


@pytest.mark.parametrize("call", sorted(_refusals(TenantMemory(MagicMock(), "x"))))
def test_a_key_for_alice_is_refused_bobs_memory_before_anything_runs(call: str) -> None:
    mem, tm = _limited(owners=frozenset({"alice"}))
    with pytest.raises(Forbidden) as refused:
        _refusals(tm)[call]()
    assert refused.value.field is not None and refused.value.field.endswith("owner")
    assert mem.mock_calls == [], call  # nothing read, nothing written


def test_a_key_for_alice_finds_nothing_of_bobs_by_id() -> None:
    mem, tm = _limited(owners=frozenset({"alice"}))
    mem.get_message.return_value.owner = BOB
    mem.procedural.skill.return_value.skill.owner = BOB
    mem.procedural.case.return_value.case.owner = BOB
    mem.owner_of.return_value = BOB
    mem.jobs.get.return_value.owner = BOB
    for call in (lambda: tm.jobs.get("j1"), lambda: tm.jobs.rerun("j1"),
                 lambda: tm.messages.get("m1"), lambda: tm.skills.get("s1"),
                 lambda: tm.cases.get("c1"), lambda: tm.messages.forget("m1"),
                 lambda: tm.facts.forget("f1"), lambda: tm.traces.forget("t1")):
        with pytest.raises(NotFound):
            call()
    mem.procedural.history.return_value.skills = [mem.procedural.skill.return_value.skill]
    with pytest.raises(NotFound):  # at a time: whose it is is read first
        tm.skills.get("s1", as_of=T0)
    assert mem.procedural.skill.call_count == 1  # only the call above, without a time
    assert not mem.forget_message.called and not mem.forget_fact.called
    assert not mem.forget_trace.called and not mem.jobs.rerun.called
    mem.owner_of.return_value = None  # nothing left of it: forgetting says so itself
    tm.messages.forget("m1")
    mem.forget_message.assert_called_once_with("acme", "m1", None)
    tm.messages.owners()
    mem.owners.assert_called_once_with("acme", "", 50, frozenset({"alice"}))


def test_a_read_only_key_writes_nothing() -> None:
    mem, tm = _limited(read_only=True)
    refusals = _refusals(tm)
    for name in ("ingest", "forget_session", "forget_matching", "forget_owner", "observe",
                 "profile_apply", "traces", "retry"):
        with pytest.raises(Forbidden, match="read-only"):
            refusals[name]()
    for call in (lambda: tm.messages.forget("m1"), lambda: tm.facts.forget("f1"),
                 lambda: tm.traces.forget("t1"), lambda: tm.jobs.rerun("j1")):
        with pytest.raises(Forbidden, match="read-only"):
            call()
    assert mem.mock_calls == []
    for name in ("sessions", "search", "query", "export", "skills"):
        refusals[name]()  # reads go through
    tm.jobs.get("j1")
    tm.usage()


def test_access_must_be_for_the_tenant() -> None:
    with pytest.raises(ValueError, match="access to tenant 'other'"):
        TenantMemory(MagicMock(), "acme", Access(tenant="other"))


def test_the_caller_goes_into_what_is_forgotten() -> None:
    mem = MagicMock()
    tm = TenantMemory(mem, "acme", caller="3f1c0b9a72de")
    tm.facts.forget("f1")
    mem.forget_fact.assert_called_once_with("acme", "f1", "3f1c0b9a72de")
    tm.messages.forget_session("alice", "s1")
    mem.forget_session.assert_called_once_with("acme", "alice", "s1", "3f1c0b9a72de")
