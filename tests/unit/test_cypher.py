"""Unit tests of graphmem.cypher and lints of the ``cypher/`` folder (no database).

The tenant lint reads every ``.cypher`` file under ``cypher/``. A node of a tenant-bound label
(one the schema keys by ``tenant``, or a second label of such a node) is reached only through
``{tenant: $tenant, ...}`` in its property map or from a node the query already holds; index
calls filter on ``.tenant = $tenant``. A query that spans tenants on purpose is listed in
`CROSS_TENANT` with the reason; an entry whose file is gone or passes the lint fails the test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphmem import cypher

ALL_FILES = sorted(cypher.CYPHER_DIR.rglob("*.cypher"))
QUERY_FILES = sorted((cypher.CYPHER_DIR / "queries").rglob("*.cypher"))
SCHEMA_FILES = sorted((cypher.CYPHER_DIR / "schema").glob("*.cypher"))

CROSS_TENANT = {
    "queries/jobs/claim.cypher": "a worker claims jobs of every tenant ($tenant optional)",
    "queries/jobs/prune_done.cypher": "job retention runs over every tenant ($tenant optional)",
    "queries/jobs/counts_all.cypher": "the operator's /metrics job gauge, never shown to a tenant",
    "queries/reembed/episodes_pending.cypher": "re-embedding moves the whole database",
    "queries/reembed/facts_pending.cypher": "re-embedding moves the whole database",
    "queries/reembed/sentences_pending.cypher": "re-embedding moves the whole database",
    "queries/reembed/windows_pending.cypher": "re-embedding moves the whole database",
    "queries/reembed/cases_pending.cypher": "re-embedding moves the whole database",
    "queries/reembed/skills_from_cases.cypher": "re-embedding moves the whole database",
    "queries/reembed/chunks_pending.cypher": "re-embedding moves the whole database",
    "queries/reembed/topics_from_chunks.cypher": "re-embedding moves the whole database",
    "queries/reembed/write.cypher": "re-embedding writes the vectors of nodes it read by elementId",
    "queries/reembed/write.vectors.cypher": "write.cypher, its vectors sent as vector values",
    "queries/scope/pending_owners.cypher": "the fulltext scope migration covers the whole database",
    "queries/scope/backfill.cypher": "the fulltext scope migration covers the whole database",
    "queries/metadata/pending.cypher": "the metadata migration covers the whole database",
    "queries/metadata/backfill.cypher": "the metadata migration covers the whole database",
    "queries/topic_index/pending.cypher": "the topic index migration covers the whole database",
    "queries/topic_index/backfill.cypher": "the topic index migration covers the whole database",
    "queries/sparse/pending_owners.cypher": "the sparse backfill (schema sparse) covers the whole "
                                            "database",
}
"""Files that read or write across tenants on purpose: path under cypher/ -> why."""

SECOND_LABELS = {"Observation": "Fact", "ProfileFact": "Fact"}
"""Labels only ever set on a node of a tenant-bound label: label -> that label."""
GLOBAL_LABELS = {"GraphMeta": "one node per database: the embedding model it was built with"}
"""Labels of nodes that belong to no tenant: label -> why."""

_LABELS = r"[A-Za-z_]\w*(?:\s*[|&:]\s*[A-Za-z_]\w*)*"
_NODE = re.compile(r"\(\s*(\w*)\s*(?::\s*(" + _LABELS + r"))?\s*(\{[^{}]*\})?\s*\)")
_LABEL_SET = re.compile(r"\b(?:SET|REMOVE)\s+\w+\s*:\s*(" + _LABELS + ")")
_DDL = re.compile(
    r"^\s*(?:CYPHER\s+\d+\s+)?(?:CREATE|DROP)\s+(?:\w+\s+)?(?:CONSTRAINT|INDEX)\b", re.I)
_SCHEMA_FOR = re.compile(r"\bFOR\s+\(\s*(\w+)\s*:\s*(\w+)\s*\)\s*(?:REQUIRE|ON)\s+([^;]*)", re.I)
_CLAUSE = re.compile(r"\b(?:MATCH|MERGE|CREATE)\b")
_CLAUSE_END = re.compile(
    r"\b(?:WHERE|WITH|RETURN|SET|ON|CALL|UNWIND|DELETE|DETACH|REMOVE|FOREACH|ORDER|LIMIT|SKIP|"
    r"USING|MATCH|OPTIONAL|MERGE|CREATE|UNION)\b|[{};]", re.I)
_TENANT_KEY = re.compile(r"\btenant\s*:\s*\$tenant\b")
_INDEX_CALL = re.compile(r"db\.index\.(?:vector|fulltext)\.queryNodes|\bSEARCH\s+\w+\s+IN\b")


def code(text: str) -> str:
    """The text without its // comment lines."""
    return "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("//"))


def header(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.strip().startswith("//"))


def labels_of(expr: str | None) -> set[str]:
    return set(re.split(r"\s*[|&:]\s*", expr.strip())) if expr else set()


def schema_tenant_labels() -> set[str]:
    """Labels the schema keys by tenant (a constraint or index over ``x.tenant``)."""
    found = set()
    for path in SCHEMA_FILES:
        for var, label, rest in _SCHEMA_FOR.findall(code(path.read_text(encoding="utf-8"))):
            if re.search(rf"\b{var}\.tenant\b", rest):
                found.add(label)
    return found


TENANT_LABELS = frozenset(schema_tenant_labels() | set(SECOND_LABELS))


def data_part(text: str) -> str:
    """The statements of a file that read or write data (schema DDL left out)."""
    return ";\n".join(s for s in cypher.statements(code(text)) if not _DDL.match(s))


def patterns(body: str, start: int) -> list[str]:
    """The comma-separated patterns of the clause whose pattern starts at ``start``: up to the
    next keyword, brace or semicolon outside brackets."""
    parts, depth, begin, i = [], 0, start, start
    while i < len(body):
        ch = body[i]
        if depth == 0 and _CLAUSE_END.match(body, i):
            break
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            parts.append(body[begin:i])
            begin = i + 1
        i += 1
    return [*parts, body[begin:i]]


def tenant_problems(text: str) -> list[str]:
    """Why a query could read or write another tenant's nodes (empty: it cannot)."""
    body = data_part(text)
    problems = []
    tenant_nodes = [m for m in _NODE.finditer(body) if labels_of(m.group(2)) & TENANT_LABELS]
    for m in tenant_nodes:
        if m.group(3) is not None and not _TENANT_KEY.search(m.group(3)):
            problems.append(f"property map without tenant: {m.group(0)}")
    for clause in _CLAUSE.finditer(body):
        for pattern in patterns(body, clause.end()):
            nodes = list(_NODE.finditer(re.sub(r"^\s*\w+\s*=", "", pattern)))
            anchored = any(
                (n.group(3) is not None and _TENANT_KEY.search(n.group(3)))
                or (n.group(1) and re.search(rf"\b{n.group(1)}\b", body[: clause.start()]))
                for n in nodes)
            reaches = any(not n.group(2) or labels_of(n.group(2)) & TENANT_LABELS for n in nodes)
            if nodes and reaches and not anchored:
                problems.append(f"pattern not anchored at $tenant or a held node: "
                                f"{clause.group(0)} {pattern.strip()}")
    if _INDEX_CALL.search(body) and not re.search(r"\.tenant\s*=\s*\$tenant\b", body):
        problems.append("index call without a tenant filter")
    if tenant_nodes and "$tenant" not in body:
        problems.append("no $tenant at all")
    return problems


def rel(path: Path) -> str:
    return path.relative_to(cypher.CYPHER_DIR).as_posix()


def test_there_are_cypher_files() -> None:
    assert QUERY_FILES
    assert len(ALL_FILES) > len(QUERY_FILES)


def test_the_schema_keys_the_tenant_labels_by_tenant() -> None:
    assert {"Message", "Sentence", "Session", "Episode", "Fact", "FactKey", "FactType",
            "FormationLock", "Job", "LLMUsage"} <= TENANT_LABELS
    assert not TENANT_LABELS & set(GLOBAL_LABELS)


def test_every_label_is_tenant_bound_or_declared_global() -> None:
    used: dict[str, set[str]] = {}
    for path in ALL_FILES:
        body = code(path.read_text(encoding="utf-8"))
        found = [m.group(2) for m in _NODE.finditer(body)] + _LABEL_SET.findall(body)
        for label in set().union(*map(labels_of, found)):
            used.setdefault(label, set()).add(rel(path))
    unknown = {k: sorted(v) for k, v in used.items() if k not in TENANT_LABELS | set(GLOBAL_LABELS)}
    assert unknown == {}, "key the label by tenant in cypher/schema/ or declare it global"


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=rel)
def test_unique_constraints_of_tenant_labels_include_the_tenant(path: Path) -> None:
    for statement in cypher.statements(code(path.read_text(encoding="utf-8"))):
        if "IS UNIQUE" in statement.upper():
            [(var, label, keys)] = _SCHEMA_FOR.findall(statement)
            assert label in GLOBAL_LABELS or f"{var}.tenant" in keys, statement


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


@pytest.mark.parametrize("path", [p for p in ALL_FILES if rel(p) not in CROSS_TENANT], ids=rel)
def test_every_cypher_file_is_tenant_scoped(path: Path) -> None:
    assert tenant_problems(path.read_text(encoding="utf-8")) == [], (
        "scope it to $tenant, or add it to CROSS_TENANT with the reason")


@pytest.mark.parametrize("name", sorted(CROSS_TENANT))
def test_cross_tenant_entries_are_not_stale(name: str) -> None:
    path = cypher.CYPHER_DIR / name
    assert path.is_file(), f"{name} is gone: remove its CROSS_TENANT entry"
    assert tenant_problems(path.read_text(encoding="utf-8")) != [], (
        f"{name} is tenant-scoped now: remove its CROSS_TENANT entry")


@pytest.mark.parametrize(
    "bad",
    [
        "MATCH (m:Message {id: $id}) RETURN m",
        "MERGE (s:Session {owner: $owner}) RETURN s",
        "MATCH (m:Message) WHERE m.id = $id RETURN m",
        "OPTIONAL MATCH p = (s:Sentence) RETURN p",
        "CALL db.index.fulltext.queryNodes('x', $q) YIELD node RETURN node",
        "CYPHER 25 MATCH (s:Sentence {tenant: $tenant}) SEARCH s IN (VECTOR INDEX v FOR $v "
        "WHERE s.owner = $owner LIMIT 5) RETURN s",
        "MATCH (j:Job) WHERE j.tenant = $tenant RETURN j",  # scope in the map, not in WHERE
        "MATCH (k:FactKey|FormationLock {owner: $owner}) DETACH DELETE k",
        "MATCH (f:Fact {tenant: $tenant, id: $id}), (g:Fact {id: $other}) RETURN f, g",
        "MATCH (a:Fact {tenant: $tenant}), (b:Observation) RETURN a, b",
        "MATCH (n) WHERE elementId(n) = $eid SET n.x = 1",
        "UNWIND $ids AS id MATCH (e:Episode)-[:DERIVED_FROM]->(m:Message {id: id}) RETURN e",
        "MATCH (u:LLMUsage {day: $day}) RETURN u",
        "MATCH (x:Fact {tenant: $tenant}) WHERE EXISTS { MATCH (y:Fact {id: x.id}) } RETURN x",
    ],
)
def test_tenant_lint_catches_unscoped_queries(bad: str) -> None:
    assert tenant_problems(f"// Purpose: bad\n{bad}\n") != []


@pytest.mark.parametrize(
    "good",
    [
        "MATCH (m:Message {tenant: $tenant, id: $id})\nOPTIONAL MATCH (m)-[:NEXT]->(n:Message)\n"
        "RETURN n",
        "MATCH (m:Message {tenant: $tenant, id: $id})\nCALL (m) {\n"
        "  MATCH (s:Sentence)-[:PART_OF]->(m) RETURN collect(s) AS ss\n}\nRETURN ss",
        "MATCH (a:Fact {tenant: $tenant, id: $a}), (b:Fact {tenant: $tenant, id: $b})\n"
        "CREATE (a)-[:SUPERSEDES {at: $now}]->(b)",
        "MATCH (k:FactKey|FormationLock {tenant: $tenant, owner: $owner}) DETACH DELETE k",
        "MERGE (g:GraphMeta {key: 'embedding'}) RETURN g.model AS model",
        "CREATE CONSTRAINT x IF NOT EXISTS\nFOR (m:Message) REQUIRE (m.tenant, m.id) IS UNIQUE;\n",
    ],
)
def test_tenant_lint_accepts_scoped_queries_and_schema(good: str) -> None:
    assert tenant_problems(f"// Purpose: good\n{good}\n") == []


def test_load_returns_the_file_text() -> None:
    text = cypher.load("queries/messages/get_messages")
    assert text == (cypher.CYPHER_DIR / "queries" / "messages" / "get_messages.cypher").read_text(
        "utf-8")


@pytest.mark.parametrize("name", ["queries/no_such_query", "nope", "queries/../nope"])
def test_load_unknown_name_raises_file_not_found(name: str) -> None:
    with pytest.raises(FileNotFoundError):
        cypher.load(name)


def test_names_lists_every_query_and_each_loads() -> None:
    for folder in sorted({p.parent for p in QUERY_FILES}):
        where = folder.relative_to(cypher.CYPHER_DIR).as_posix()
        names = cypher.names(where)
        assert names == sorted(f"{where}/{p.stem}" for p in QUERY_FILES if p.parent == folder)
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
