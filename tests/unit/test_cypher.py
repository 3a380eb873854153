"""Unit tests of graphmem.cypher and lints of the ``cypher/`` folder (no database)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphmem import cypher

ALL_FILES = sorted(cypher.CYPHER_DIR.rglob("*.cypher"))
QUERY_FILES = sorted((cypher.CYPHER_DIR / "queries").glob("*.cypher"))
TENANT_LABELS = ("Message", "Sentence", "Session")

_LABELLED_NODE = re.compile(
    r"\(\s*\w*\s*:\s*(?:" + "|".join(TENANT_LABELS) + r")\b\s*(\{[^}]*\})?\s*\)"
)
_CLAUSE_START = re.compile(r"\b(?:MATCH|MERGE|CREATE)\s+(?:\w+\s*=\s*)?(\([^)]*\))")
_TENANT_KEY = re.compile(r"\btenant\s*:\s*\$tenant\b")
_INDEX_CALL = re.compile(r"db\.index\.(?:vector|fulltext)\.queryNodes")


def code(text: str) -> str:
    """The text without its // comment lines."""
    return "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("//"))


def header(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.strip().startswith("//"))


def tenant_problems(text: str) -> list[str]:
    """Why a query could read or write another tenant's Message/Sentence/Session nodes."""
    body = code(text)
    problems = []
    for m in _LABELLED_NODE.finditer(body):
        props = m.group(1)
        if props is not None and not _TENANT_KEY.search(props):
            problems.append(f"property map without tenant: {m.group(0)}")
    for m in _CLAUSE_START.finditer(body):
        node = m.group(1)
        if _LABELLED_NODE.fullmatch(node) and not _TENANT_KEY.search(node):
            problems.append(f"clause starts at a node not scoped to $tenant: {m.group(0)}")
    if _INDEX_CALL.search(body) and not re.search(r"\.tenant\s*=\s*\$tenant\b", body):
        problems.append("index call without a tenant filter")
    if _LABELLED_NODE.search(body) and "$tenant" not in body:
        problems.append("no $tenant at all")
    return problems


def rel(path: Path) -> str:
    return str(path.relative_to(cypher.CYPHER_DIR))


def test_there_are_cypher_files() -> None:
    assert QUERY_FILES
    assert len(ALL_FILES) > len(QUERY_FILES)


@pytest.mark.parametrize("path", ALL_FILES, ids=rel)
def test_every_file_opens_with_a_purpose_comment(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("//")
    assert "Purpose" in first


@pytest.mark.parametrize("path", ALL_FILES, ids=rel)
def test_every_parameter_is_documented_in_the_header(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    used = set(re.findall(r"\$(\w+)", code(text)))
    documented = set(re.findall(r"\$(\w+)", header(text)))
    assert used <= documented


@pytest.mark.parametrize("path", QUERY_FILES, ids=rel)
def test_queries_are_tenant_scoped(path: Path) -> None:
    assert tenant_problems(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "bad",
    [
        "MATCH (m:Message {id: $id}) RETURN m",
        "MERGE (s:Session {owner: $owner}) RETURN s",
        "MATCH (m:Message) WHERE m.id = $id RETURN m",
        "OPTIONAL MATCH p = (s:Sentence) RETURN p",
        "CALL db.index.fulltext.queryNodes('x', $q) YIELD node RETURN node",
    ],
)
def test_tenant_lint_catches_unscoped_queries(bad: str) -> None:
    assert tenant_problems(f"// Purpose: bad\n{bad}\n") != []


def test_tenant_lint_allows_traversal_from_a_scoped_node() -> None:
    good = (
        "MATCH (m:Message {tenant: $tenant, id: $id})\n"
        "OPTIONAL MATCH (m)-[:NEXT]->(n:Message)\n"
        "RETURN n"
    )
    assert tenant_problems(good) == []


def test_load_returns_the_file_text() -> None:
    text = cypher.load("queries/get_messages")
    assert text == (cypher.CYPHER_DIR / "queries" / "get_messages.cypher").read_text("utf-8")


@pytest.mark.parametrize("name", ["queries/no_such_query", "nope", "queries/../nope"])
def test_load_unknown_name_raises_file_not_found(name: str) -> None:
    with pytest.raises(FileNotFoundError):
        cypher.load(name)


def test_names_lists_every_query_and_each_loads() -> None:
    names = cypher.names("queries")
    assert names == sorted(f"queries/{p.stem}" for p in QUERY_FILES)
    for name in names:
        assert cypher.load(name)


def test_statements_splits_and_drops_comment_only_parts() -> None:
    text = (
        "// Purpose: two statements\n"
        "// Parameters: none\n"
        "CREATE INDEX a IF NOT EXISTS\n"
        "FOR (m:Message) ON (m.tenant);\n"
        "\n"
        "// a comment between statements\n"
        "CREATE INDEX b IF NOT EXISTS\n"
        "FOR (m:Message) ON (m.owner);\n"
        "\n"
        "// only a trailing comment;\n"
    )
    assert cypher.statements(text) == [
        "CREATE INDEX a IF NOT EXISTS\nFOR (m:Message) ON (m.tenant)",
        "CREATE INDEX b IF NOT EXISTS\nFOR (m:Message) ON (m.owner)",
    ]


def test_statements_last_statement_without_newline_or_semicolon() -> None:
    assert cypher.statements("RETURN 1;\nRETURN 2;") == ["RETURN 1", "RETURN 2"]
    assert cypher.statements("RETURN 1") == ["RETURN 1"]
    assert cypher.statements("// nothing\n") == []
    assert cypher.statements("") == []


@pytest.mark.parametrize("path", sorted((cypher.CYPHER_DIR / "schema").glob("*.cypher")), ids=rel)
def test_schema_statements_are_idempotent(path: Path) -> None:
    parts = cypher.statements(path.read_text(encoding="utf-8"))
    assert parts
    for statement in parts:
        assert not statement.lstrip().startswith("//")
        assert "IF NOT EXISTS" in statement
