"""The two Neo4j lines without a server: which Java runs which version (fake ``java`` scripts),
the 2026 launcher's entry point, and how the store picks its vector schema and query variants."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest

from graphmem import cypher, metrics
from graphmem.config import NEO4J_VERSION, NEO4J_VERSION_2026, Settings
from graphmem.servers import neo4j_server
from graphmem.store.connection import (
    VECTOR_INDEXES,
    declared_properties,
    exact_variant,
    filters_in_index,
    index_quantized,
    search_variant,
    vectors_variant,
    version_key,
)


def _jdk(root: Path, name: str, version: str) -> Path:
    """A folder with a bin/java that prints ``version`` as `java -version` does."""
    java = root / name / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2026-04-21\' >&2\n',
                    encoding="utf-8")
    java.chmod(0o755)
    return root / name


@pytest.fixture
def jvms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """/usr/lib/jvm stand-in with a Java 17 and a Java 25; no other Java anywhere."""
    root = tmp_path / "jvm"
    _jdk(root, "java-17", "17.0.15")
    _jdk(root, "temurin-25", "25.0.3")
    monkeypatch.setattr(neo4j_server, "_JVM_ROOT", root)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("GRAPHMEM_NEO4J_INSTANCE_DIR", str(tmp_path / "instance"))
    neo4j_server.java_release.cache_clear()
    return root


@pytest.mark.parametrize(("version", "wanted"), [
    ("5.26.30", (17, 21)), ("2025.10.1", (21, None)), ("2026.08.1", (21, None)),
])
def test_java_range_per_line(version: str, wanted: tuple[int, int | None]) -> None:
    assert neo4j_server.java_range(version) == wanted


def test_each_line_gets_a_java_it_runs_on(jvms: Path) -> None:
    assert neo4j_server.find_java(Settings(neo4j_version="5.26.30")) == str(
        jvms / "java-17" / "bin" / "java")
    assert neo4j_server.find_java(Settings(neo4j_version="2026.08.1")) == str(
        jvms / "temurin-25" / "bin" / "java")


def test_the_setting_overrides_and_is_checked(jvms: Path, tmp_path: Path) -> None:
    chosen = Settings(neo4j_version="5.26.30", neo4j_java_home=jvms / "java-17")
    assert neo4j_server.find_java(chosen) == str(jvms / "java-17" / "bin" / "java")
    too_old = Settings(neo4j_version="2026.08.1", neo4j_java_home=jvms / "java-17")
    with pytest.raises(neo4j_server.Neo4jServerError,
                       match=r"GRAPHMEM_NEO4J_JAVA_HOME=.* has Java 17; .* needs Java 21 or later"):
        neo4j_server.find_java(too_old)
    with pytest.raises(neo4j_server.Neo4jServerError, match="no runnable bin/java"):
        neo4j_server.find_java(Settings(neo4j_java_home=tmp_path / "nowhere"))


def test_no_fitting_java_names_the_setting(jvms: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(neo4j_server, "_JVM_ROOT", jvms / "java-17")  # no JDK folders below
    with pytest.raises(neo4j_server.Neo4jServerError,
                       match=r"needs Java 21 or later.*GRAPHMEM_NEO4J_JAVA_HOME"):
        neo4j_server.find_java(Settings(neo4j_version="2026.08.1"))


def test_a_new_instance_runs_the_newest_line_a_java_here_runs(
        jvms: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert neo4j_server.version(Settings()) == NEO4J_VERSION_2026
    assert neo4j_server.version(Settings(neo4j_java_home=jvms / "java-17")) == NEO4J_VERSION
    monkeypatch.setattr(neo4j_server, "_JVM_ROOT", jvms / "java-17")  # Java 17 only
    assert neo4j_server.version(Settings()) == NEO4J_VERSION


def test_an_instance_keeps_the_version_it_was_started_with(jvms: Path) -> None:
    settings = Settings()
    home = neo4j_server.instance_dir(settings)
    home.mkdir()
    neo4j_server._pin(settings.model_copy(update={"neo4j_version": NEO4J_VERSION}))
    assert (home / neo4j_server.VERSION_FILE).read_text(encoding="utf-8") == NEO4J_VERSION + "\n"
    assert neo4j_server.version(settings) == NEO4J_VERSION  # though a Java 25 is here
    assert neo4j_server.find_java(settings) == str(jvms / "java-17" / "bin" / "java")
    # Not initialised yet (its first start failed early): another version may still take it.
    assert neo4j_server.version(Settings(neo4j_version=NEO4J_VERSION_2026)) == NEO4J_VERSION_2026
    (home / "data" / "databases" / "system").mkdir(parents=True)
    with pytest.raises(neo4j_server.Neo4jServerError,
                       match=rf"written by Neo4j {NEO4J_VERSION}, not {NEO4J_VERSION_2026}"):
        neo4j_server.version(Settings(neo4j_version=NEO4J_VERSION_2026))
    assert neo4j_server.version(Settings(neo4j_version=NEO4J_VERSION)) == NEO4J_VERSION


def test_a_store_from_before_pinning_is_the_5_26_line(jvms: Path) -> None:
    settings = Settings()
    (neo4j_server.instance_dir(settings) / "data" / "databases" / "system").mkdir(parents=True)
    assert neo4j_server.pinned_version(settings) == NEO4J_VERSION
    assert neo4j_server.version(settings) == NEO4J_VERSION
    neo4j_server._pin(settings)
    assert neo4j_server.pinned_version(settings) == NEO4J_VERSION


def test_the_2026_launcher_entry_point_is_understood() -> None:
    argv = neo4j_server.parse_dry_run(
        "/usr/lib/jvm/temurin-25/bin/java -cp /i/conf/* --sun-misc-unsafe-memory-access=allow "
        "org.neo4j.server.Neo4jCommunity --home-dir=/i --config-dir=/i/conf --console-mode\n")
    assert "org.neo4j.server.Neo4jCommunity" in argv


@pytest.mark.parametrize(("version", "filtered"), [
    ("5.26.30", False), ("2025.12.0", False), ("2026.01.0", True), ("2026.08.1", True),
    ("2026.08-aura", True), ("2027.1.0", True),
])
def test_filters_in_the_index_from_2026_01(version: str, filtered: bool) -> None:
    assert filters_in_index(version) is filtered


def test_version_key() -> None:
    assert version_key("2026.08.1") == (2026, 8, 1)
    assert version_key("5.26.30") == (5, 26, 30)


def test_both_vector_schemas_declare_every_index_and_the_filtered_one_its_filters() -> None:
    plain = cypher.load("schema/vector/plain")
    filtered = declared_properties(cypher.load("schema/vector/filtered"))
    assert set(filtered) == set(VECTOR_INDEXES)
    assert all(f"CREATE VECTOR INDEX {name} IF NOT EXISTS" in plain for name in VECTOR_INDEXES)
    assert all({"embedding", "tenant", "owner"} <= props for props in filtered.values())
    assert filtered["window_vector"] == {"embedding", "tenant", "owner", "size"}


@pytest.mark.parametrize("name", [
    "queries/recall/vector_search", "queries/turn_windows/vector_search",
    "queries/facts/vector_search",
    "queries/episodes/vector_search", "queries/procedural/case_vector_search",
    "queries/procedural/skill_vector_search",
])
def test_every_vector_query_has_a_search_variant_with_the_same_columns(name: str) -> None:
    variant = search_variant(name)
    assert variant == f"{name}.search"
    text = cypher.load(variant)
    assert text.splitlines()[[ln.startswith("//") for ln in text.splitlines()].index(False)] == (
        "CYPHER 25")
    assert ".tenant = $tenant" in text and ".owner = $owner" in text
    assert "AS fetched" in text and "hits" in text.rsplit("RETURN", 1)[1]
    assert search_variant("queries/recall/vector_search_exact") is None


@pytest.mark.parametrize("name", [
    "queries/recall/vector_search", "queries/turn_windows/vector_search",
    "queries/facts/vector_search",
    "queries/episodes/vector_search", "queries/procedural/case_vector_search",
    "queries/procedural/skill_vector_search",
])
def test_every_search_variant_has_an_exact_scan_taking_its_parameters(name: str) -> None:
    """A failed SEARCH is answered by ``<name>_exact``: the same parameters, ``$k`` for
    ``$fetch``, one row per hit with id and score, every filter of the SEARCH applied."""
    exact = exact_variant(name)
    assert exact == f"{name}_exact"
    search = cypher.load(f"{name}.search")
    text = cypher.load(exact)

    def params(q: str) -> set[str]:
        return set(re.findall(r"\$(\w+)", q))

    assert params(text) == params(search) - {"fetch"} | {"k"}
    assert "LIMIT $k" in text and "AS score" in text and "ORDER BY score DESC" in text
    assert exact_variant(exact) is None and search_variant(exact) is None


@pytest.mark.parametrize("name", [
    "queries/messages/write_sentences", "queries/turn_windows/create", "queries/reembed/write",
])
def test_every_vectors_variant_is_its_query_storing_the_vector_as_a_list(name: str) -> None:
    """``<name>.vectors`` is ``<name>`` in Cypher 25 with ``toFloatList(row.embedding)`` for
    ``row.embedding``, and nothing else changed: the two cannot drift apart."""
    variant = vectors_variant(name)
    assert variant == f"{name}.vectors"

    def body(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if not ln.startswith("//")]

    base = "\n".join(body(cypher.load(name)))
    assert "row.embedding" in base
    assert body(cypher.load(variant)) == [
        "CYPHER 25", *base.replace("row.embedding", "toFloatList(row.embedding)").splitlines()]
    assert vectors_variant(variant) is None
    assert vectors_variant("queries/recall/vector_search") is None


def test_a_failing_search_variant_falls_back_to_the_exact_scan_or_the_over_fetching_query(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A server-side failure of the SEARCH query (seen on 2026.08 once vectors were deleted
    from the index, when the filter matches fewer vectors than the LIMIT) is answered by the
    query's exact scan, asked for as many hits and returned in the SEARCH shape; a query
    without one by the 5.x query. Logged once per query, counted every time; never a 500."""
    from neo4j.exceptions import DatabaseError

    from graphmem.store.core import Store

    store = Store(Settings(neo4j_uri="bolt://127.0.0.1:1"))  # never connects here
    store._version = "2026.08.1"
    ran: list[tuple[str, object]] = []

    def execute(name: str, write: bool, params: dict[str, object],
                plain: bool = False) -> list[dict[str, object]]:
        ran.append((name, params.get("k")))
        if name.endswith(".search"):
            raise DatabaseError("Index 33554375 out of bounds for length 31")
        if name.endswith("_exact"):
            return [{"id": "m1", "score": 0.9}, {"id": "m2", "score": 0.8}]
        return [{"fetched": 0, "hits": []}]

    monkeypatch.setattr(store, "_execute", execute)
    counted = metrics.SEARCH_FALLBACKS.labels("queries/recall/vector_search.search")
    before = counted._value.get()
    exact = [{"fetched": 2, "hits": [{"id": "m1", "score": 0.9}, {"id": "m2", "score": 0.8}],
              "exact": True}]
    with caplog.at_level(logging.DEBUG, logger="graphmem.store"):
        assert store.run("queries/recall/vector_search", owner="o", fetch=40) == exact
        assert store.run("queries/recall/vector_search", owner="p", fetch=40, k=5) == exact
        monkeypatch.setattr("graphmem.store.connection.exact_variant", lambda name: None)
        assert store.run("queries/facts/vector_search", owner="o", fetch=40) == [
            {"fetched": 0, "hits": []}]  # a query without an exact scan: the 5.x query
    assert ran == [("queries/recall/vector_search.search", None),
                   ("queries/recall/vector_search_exact", 40),
                   ("queries/recall/vector_search.search", 5),
                   ("queries/recall/vector_search_exact", 5),
                   ("queries/facts/vector_search.search", None),
                   ("queries/facts/vector_search", None)]
    warned = [r for r in caplog.records if "answered instead by" in r.getMessage()]
    assert [r.levelno for r in warned] == [logging.WARNING, logging.DEBUG, logging.WARNING]
    assert counted._value.get() == before + 2  # every one counted
    store.close()


@pytest.mark.parametrize(("filters_in_index", "session", "fetch"),
                         [(False, None, 80), (True, None, 10), (True, "s1", 80)])
def test_the_window_list_reads_just_k_where_the_index_filters_and_nothing_follows(
        filters_in_index: bool, session: str | None, fetch: int) -> None:
    """k=10, overfetch 8: the index keeps only the owner's windows of the size, so with no
    session or time filter after it k are enough (and on 2026.08.1 a fetch above the owner's
    windows can fail the SEARCH)."""
    from types import SimpleNamespace
    from typing import Any, cast

    from graphmem.store.tenant import Filters
    from graphmem.store.windows import WindowStore

    asked: list[int] = []

    def run(name: str, *, write: bool = False, **params: Any) -> list[dict[str, Any]]:
        asked.append(params["fetch"])
        return [{"fetched": params["fetch"],
                 "hits": [{"id": f"w{i}", "score": 1 - i / 100} for i in range(10)]}]

    windows = WindowStore(cast(Any, SimpleNamespace(run=run, vector_filters=filters_in_index)),
                          "t")
    assert len(windows.search("vector", "o", 3, 10, 8, Filters(session_id=session),
                              vector=[0.0])) == 10
    assert asked == [fetch]


@pytest.mark.parametrize(("filters_in_index", "unit", "fetch"), [
    (False, "episode", 80), (True, "episode", 10), (False, "case", 80), (True, "case", 10),
    (True, "skill", 80)])
def test_episode_and_case_lists_read_just_k_where_the_index_filters(
        filters_in_index: bool, unit: str, fetch: int) -> None:
    """Nothing filters episodes or cases after a filtering index: k=10 are read, not k x 8;
    skills keep the over-fetch for their version filter, and Neo4j 5 for the owner filter."""
    from types import SimpleNamespace
    from typing import Any, cast

    from graphmem.store.episodes import EpisodeStore
    from graphmem.store.procedural import ProceduralStore

    asked: list[int] = []

    def run(name: str, *, write: bool = False, **params: Any) -> list[dict[str, Any]]:
        asked.append(params["fetch"])
        return [{"fetched": params["fetch"],
                 "hits": [{"id": f"x{i}", "score": 1 - i / 100} for i in range(10)]}]

    fake = cast(Any, SimpleNamespace(run=run, vector_filters=filters_in_index))
    if unit == "episode":
        hits = EpisodeStore(fake, "t").search("vector", "o", 10, 8, vector=[0.0])
    else:
        hits = ProceduralStore(fake, "t").search(unit, "vector", "o", 10, 8, vector=[0.0])
    assert len(hits) == 10 and asked == [fetch]


@pytest.mark.parametrize(("filters_in_index", "fetch"), [(False, 80), (True, 40)])
def test_the_sentence_list_over_fetches_less_where_the_index_filters(
        filters_in_index: bool, fetch: int) -> None:
    """k=10, overfetch 8: 80 hits read on 5.x; 4 per message wanted (40) where the index
    keeps only the owner's sentences."""
    from types import SimpleNamespace
    from typing import Any, cast

    from graphmem.store.tenant import FILTERED_OVERFETCH, Filters, TenantStore

    asked: list[int] = []

    def run(name: str, *, write: bool = False, **params: Any) -> list[dict[str, Any]]:
        asked.append(params["fetch"])
        return [{"fetched": params["fetch"],
                 "hits": [{"id": f"m{i}", "score": 1 - i / 100} for i in range(10)]}]

    fake = SimpleNamespace(run=run, vector_filters=filters_in_index)
    store = TenantStore(cast(Any, fake), "t")
    assert len(store.vector_search("o", [0.0], 10, 8, Filters())) == 10
    assert asked == [fetch] and FILTERED_OVERFETCH == 4


def test_index_quantized_reads_both_lines() -> None:
    def idx(config: dict[str, Any]) -> dict[str, Any]:
        return {"name": "sentence_vector", "options": {"indexConfig": config}}

    assert index_quantized(idx({"vector.quantization.type": "BINARY"})) is True
    assert index_quantized(idx({"vector.quantization.type": "NONE"})) is False
    assert index_quantized(idx({"vector.quantization.enabled": True})) is True
    assert index_quantized(idx({"vector.quantization.enabled": False})) is False
    assert index_quantized({"name": "message_key", "options": {}}) is None
    assert index_quantized({"name": "message_key", "options": None}) is None
