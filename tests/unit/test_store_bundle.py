"""`TenantStores`: every store of one tenant, bound once; the services work over it and never
take a tenant's name (no Neo4j: binding a store runs nothing)."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from graphmem.store import Store, TenantStores
from graphmem.store.tenant import TenantBound

ROOT = Path(__file__).resolve().parents[2] / "graphmem"
SERVICES = ["facts/service.py", "procedural/service.py", "documents/service.py",
            "formation/run.py"]


def test_every_store_of_the_bundle_is_bound_to_its_tenant() -> None:
    store = Store.__new__(Store)  # never connected: binding runs no query
    stores = store.tenant_stores("acme")
    bound = [getattr(stores, f.name) for f in fields(TenantStores) if f.name != "tenant"]
    assert stores.tenant == "acme" and len(bound) >= 7
    assert all(isinstance(s, TenantBound) and s.tenant == "acme" for s in bound)


@pytest.mark.parametrize("path", SERVICES)
def test_a_service_takes_the_stores_never_a_tenant_name(path: str) -> None:
    tree = ast.parse((ROOT / path).read_text())
    taking = [f"{cls.name}.{fn.name}" for cls in tree.body if isinstance(cls, ast.ClassDef)
              for fn in cls.body if isinstance(fn, ast.FunctionDef)
              if any(a.arg == "tenant" for a in fn.args.args)]
    assert taking == []
