"""`TenantMemory`, the one front door: every call is bound to its tenant, and no HTTP route
module reaches around it to the store."""

from __future__ import annotations

import ast
from datetime import UTC, date, datetime
from pathlib import Path
from unittest.mock import MagicMock

import pytest

from graphmem.errors import InvalidInput
from graphmem.models import AuditResult, ForgetMessages, SearchRequest
from graphmem.tenant_memory import TenantMemory

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
    mem.ingest.assert_called_once_with("acme", [])
    tm.messages.get("m1")
    mem.get_message.assert_called_once_with("acme", "m1")
    tm.messages.session("s1", "alice", 5, 10)
    mem.session_messages.assert_called_once_with("acme", "s1", "alice", 5, 10)
    tm.messages.forget_owner("alice")
    mem.delete_owner.assert_called_once_with("acme", "alice")
    tm.export("alice", "message:m1", 7)
    mem.export_owner.assert_called_once_with("acme", "alice", "message:m1", 7)
    tm.messages.forget("m1")
    mem.forget_message.assert_called_once_with("acme", "m1")
    tm.messages.owners("a", 5)
    mem.owners.assert_called_once_with("acme", "a", 5)
    tm.messages.sessions("alice", 2, 3)
    mem.sessions.assert_called_once_with("acme", "alice", 2, 3)
    tm.messages.forget_session("alice", "s1")
    mem.forget_session.assert_called_once_with("acme", "alice", "s1")
    forget = ForgetMessages(owner="alice", session_id="s1")
    tm.messages.forget_matching(forget)
    mem.forget_matching.assert_called_once_with("acme", forget)
    tm.search(req)
    mem.search.assert_called_once_with("acme", req, None)
    tm.facts.query("alice", as_of=t)
    mem.facts.query.assert_called_once_with("acme", "observation", "alice", None, None, t, None,
                                            False)
    tm.facts.history("f1")
    mem.facts.history.assert_called_once_with("acme", "f1")
    tm.profile.get("alice", known_at=t)
    mem.facts.query.assert_called_with("acme", "profile", "alice", None, None, None, t, False)
    tm.profile.apply([])
    mem.facts.profile_ops.assert_called_once_with("acme", [])
    tm.jobs.rerun("j1")
    mem.jobs.rerun.assert_called_once_with("acme", "j1")
    tm.usage(date(2026, 1, 1))
    mem.llm_usage.assert_called_once_with("acme", date(2026, 1, 1), None)
    tm.skills.get("s1")
    mem.procedural.skill.assert_called_once_with("acme", "s1", 50, None, None)
    tm.cases.get("c1")
    mem.procedural.case.assert_called_once_with("acme", "c1")
    tm.traces.forget("t1")
    mem.forget_trace.assert_called_once_with("acme", "t1")


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
