"""Reads go in read transactions, writes in write transactions (no database).

A `neo4j://` routing URI sends a read transaction to a follower, which refuses a write; a write
transaction always goes to the leader, so a read run as a write only loads it. This lint finds
every place in `graphmem/` that runs a named query (``run("queries/...", write=...)``, a
tenant store's ``_run``; ``_run_plain``, ``ranked_search`` / ``ranked_rows``, which read) and
checks the ``write=`` flag against the query's text: a query with a write clause (CREATE, MERGE,
SET, DELETE, REMOVE, a writing procedure) must be run with ``write=True``, a read-only one
without.
A name built from an f-string (``f"audit/{name}"``) stands for every file it can name.
Queries run inside ``write_tx`` (``tx.run(cypher.load(...))``) are in a write transaction by
construction and are not checked.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphmem import cypher

SOURCE = Path(cypher.__file__).resolve().parent
NAMES = sorted(p.relative_to(cypher.CYPHER_DIR).with_suffix("").as_posix()
               for p in cypher.CYPHER_DIR.rglob("*.cypher"))
RUNNERS = {"run", "_run"}
"""Methods that take a query name first and a ``write=`` flag (`Store.run`, `TenantBound._run`)."""
FOLDERS = tuple(sorted({n.split("/")[0] + "/" for n in NAMES}))
"""A string names a query when it starts with a folder of cypher/ (``queries/``, ``audit/``)."""
READERS = {"ranked_search": 1, "ranked_rows": 1, "_run_plain": 0}
"""Functions that read with the query name at this argument position (`TenantBound._run_plain`
runs a read of plain values)."""

_WRITE = re.compile(
    r"(?<![\w.$`])(?:CREATE|MERGE|SET|DELETE|REMOVE)(?![\w`])"
    r"|\bdb\.create\.set\w*Property\b|\bIN\s+TRANSACTIONS\b", re.IGNORECASE)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def writes(text: str) -> bool:
    """Whether a query's text holds a write clause (comments and string literals ignored)."""
    body = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("//"))
    return bool(_WRITE.search(_STRING.sub("''", body)))


@dataclass(frozen=True)
class Site:
    where: str
    pattern: str
    write: bool

    def names(self) -> list[str]:
        rx = re.compile(self.pattern)
        return [n for n in NAMES if rx.fullmatch(n)]


def _pattern(node: ast.expr, dicts: dict[str, list[str]]) -> list[str]:
    """Regexes of the query names an argument can be: a string, an f-string (each ``{...}``
    one path segment's worth of characters), or a module-level dict of names subscripted."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [re.escape(node.value)] if node.value.startswith(FOLDERS) else []
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        if not (isinstance(head, ast.Constant) and str(head.value).startswith(FOLDERS)):
            return []
        return ["".join(re.escape(v.value) if isinstance(v, ast.Constant) else "[^/]+"
                        for v in node.values)]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return [re.escape(v) for v in dicts.get(node.value.id, [])]
    return []


def _dicts(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level ``NAME = {key: "query/name", ...}``."""
    out = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict)
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            values = [v.value for v in stmt.value.values
                      if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            if values and all(v in NAMES for v in values):
                out[stmt.targets[0].id] = values
    return out


def sites_in(source: str, label: str) -> list[Site]:
    """The named-query call sites of one Python module's text."""
    sites = []
    tree = ast.parse(source)
    dicts = _dicts(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            where = f"{label}:{node.lineno}"
            if name in RUNNERS:
                flag = next((k.value for k in node.keywords if k.arg == "write"), None)
                if flag is not None and not isinstance(flag, ast.Constant):
                    continue  # a pass-through (`_run(name, write=write)`): its callers count
                write = bool(flag.value) if isinstance(flag, ast.Constant) else False
                sites += [Site(where, p, write) for p in _pattern(node.args[0], dicts)]
            elif name in READERS and len(node.args) > READERS[name]:
                sites += [Site(where, p, False) for p in _pattern(node.args[READERS[name]], dicts)]
    return sites


def problems(site: Site) -> list[str]:
    """Why a call site runs a query in the wrong kind of transaction (empty: it does not)."""
    found = site.names()
    if not found:
        return [f"{site.where}: no Cypher file named like {site.pattern!r}"]
    out = []
    for name in found:
        needed = writes(cypher.load(name))
        if needed != site.write:
            out.append(
                f"{site.where}: {name} {'writes' if needed else 'only reads'} but runs with "
                f"write={site.write}: a routing driver would send it to "
                f"{'a follower, which refuses writes' if needed else 'the leader only'}")
    return out


SITES = [site for path in sorted(SOURCE.rglob("*.py"))
         for site in sites_in(path.read_text(encoding="utf-8"),
                              path.relative_to(SOURCE.parent).as_posix())]


def test_the_lint_finds_the_call_sites() -> None:
    assert len(SITES) > 40
    assert {s.write for s in SITES} == {True, False}
    assert any(s.names() == ["queries/jobs/claim"] and s.write for s in SITES)
    assert any("audit/" in n for s in SITES for n in s.names())


@pytest.mark.parametrize("site", SITES, ids=lambda s: f"{s.where} {s.pattern}")
def test_every_named_query_runs_in_the_transaction_its_text_needs(site: Site) -> None:
    assert problems(site) == []


def test_a_wrong_flag_is_caught() -> None:
    source = """
PENDING = {"Sentence": "queries/reembed/sentences_pending"}
def f(store, self, tx, name, unit):
    store.run("queries/jobs/claim", worker=1)                  # writes, run as a read
    self._run("queries/messages/get_messages", write=True, ids=[])      # reads, run as a write
    store.run(PENDING["Sentence"], write=True)                 # reads, run as a write
    ranked_search(self._run, f"queries/recall/{unit}_search", 1, 1, {})  # f-string: all
    self._run(name, write=True)                                # a pass-through: skipped
    tx.run("MATCH (n) SET n.x = 1")                            # not a query name: skipped
    store.run("queries/jobs/claim", write=True)                # right
"""
    found = sites_in(source, "example")
    assert [(s.where, s.write) for s in found] == [
        ("example:4", False), ("example:5", True), ("example:6", True), ("example:7", False),
        ("example:10", True)]
    assert [len(problems(s)) for s in found] == [1, 1, 1, 0, 0]
    assert {"queries/recall/fulltext_search",
            "queries/recall/vector_search"} <= set(found[3].names())


@pytest.mark.parametrize(("text", "expected"), [
    ("MATCH (m:Message {tenant: $tenant}) RETURN m", False),
    ("// Purpose: we never SET or DELETE here\nMATCH (n) RETURN n.offset, n.settled", False),
    ("MATCH (n) WHERE n.text = 'CREATE a MERGE' RETURN n", False),
    ("SHOW INDEXES YIELD name RETURN name", False),
    ("MATCH (n) SET n.x = 1", True),
    ("MERGE (n:Job {tenant: $tenant})", True),
    ("MATCH (n) DETACH DELETE n", True),
    ("MATCH (n) remove n.x", True),
    ("CALL db.create.setNodeVectorProperty(n, 'embedding', $v)", True),
    ("UNWIND $rows AS r CALL (r) { CREATE (:X) } IN TRANSACTIONS", True),
])
def test_write_clauses_are_recognised(text: str, expected: bool) -> None:
    assert writes(text) == expected
