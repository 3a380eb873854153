"""Unit tests of graphmem.servers.neo4j_server: the pure parts; no JVM, no Maven, no server."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from graphmem.config import NEO4J_VERSION, Settings
from graphmem.servers import neo4j_server as ns

JVM_KEY = "server.jvm.additional"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        neo4j_instance_dir=tmp_path / "instance",
        neo4j_dist_dir=tmp_path / "dist",
        neo4j_bolt_port=27687,
        neo4j_http_port=27474,
        neo4j_heap="768m",
        neo4j_pagecache="128m",
        neo4j_version=NEO4J_VERSION,  # not auto: no Java is probed here
    )


def conf_pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for line in text.splitlines():
        assert "=" in line, line
        key, value = line.split("=", 1)
        pairs.append((key, value))
    return pairs


def conf_dict(text: str) -> dict[str, str]:
    return {k: v for k, v in conf_pairs(text) if k != JVM_KEY}


# --- neo4j.conf ---------------------------------------------------------------------------------


def test_conf_ports_memory_and_directories(settings: Settings) -> None:
    conf = conf_dict(ns.render_conf(settings))
    home = ns.instance_dir(settings)
    assert conf["server.bolt.listen_address"] == "127.0.0.1:27687"
    assert conf["server.bolt.advertised_address"] == "localhost:27687"
    assert conf["server.http.listen_address"] == "127.0.0.1:27474"
    assert conf["server.http.advertised_address"] == "localhost:27474"
    assert conf["server.default_listen_address"] == "127.0.0.1"
    assert conf["server.https.enabled"] == "false"
    assert conf["server.memory.heap.initial_size"] == "768m"
    assert conf["server.memory.heap.max_size"] == "768m"
    assert conf["server.memory.pagecache.size"] == "128m"
    for sub in ("data", "logs", "plugins", "run", "import"):
        assert conf[f"server.directories.{sub}"] == str(home / sub)
    assert conf["dbms.usage_report.enabled"] == "false"
    assert conf["client.allow_telemetry"] == "false"
    assert conf["db.tx_log.rotation.retention_policy"] == "1 files"
    assert conf["browser.remote_content_hostname_whitelist"] == "localhost,127.0.0.1"


def test_conf_has_no_duplicate_keys_except_jvm_options(settings: Settings) -> None:
    pairs = conf_pairs(ns.render_conf(settings, post_connect_cmd=":play start"))
    counts = Counter(k for k, _ in pairs if k != JVM_KEY)
    assert [k for k, n in counts.items() if n > 1] == []
    jvm = [v for k, v in pairs if k == JVM_KEY]
    assert "-XX:+UseG1GC" in jvm
    assert "--enable-native-access=ALL-UNNAMED" in jvm
    assert "--add-modules=jdk.incubator.vector" in jvm  # Lucene's vector scoring on SIMD
    assert len(jvm) == len(set(jvm)) == 13


def test_conf_auth_flag(settings: Settings) -> None:
    assert conf_dict(ns.render_conf(settings))["dbms.security.auth_enabled"] == "true"
    no_auth = settings.model_copy(update={"neo4j_auth": False})
    assert conf_dict(ns.render_conf(no_auth))["dbms.security.auth_enabled"] == "false"


def test_conf_post_connect_cmd_only_when_given(settings: Settings) -> None:
    assert "browser.post_connect_cmd" not in conf_dict(ns.render_conf(settings))
    conf = conf_dict(ns.render_conf(settings, post_connect_cmd=":play http://localhost/x.html"))
    assert conf["browser.post_connect_cmd"] == ":play http://localhost/x.html"
    with pytest.raises(ValueError, match="single line"):
        ns.render_conf(settings, post_connect_cmd=":play a\nbogus.key=1")


def test_configure_creates_folders_and_rewrites_conf(settings: Settings) -> None:
    conf = ns.configure(settings, post_connect_cmd=":play start")
    home = ns.instance_dir(settings)
    for sub in ("conf", "data", "logs", "run", "plugins", "import"):
        assert (home / sub).is_dir()
    assert "browser.post_connect_cmd" in conf.read_text(encoding="utf-8")
    ns.configure(settings.model_copy(update={"neo4j_bolt_port": 27999}))
    text = conf.read_text(encoding="utf-8")
    assert "127.0.0.1:27999" in text
    assert "browser.post_connect_cmd" not in text


def test_pom_names_both_artifacts(settings: Settings) -> None:
    pom = ns.render_pom(settings)
    assert "<packaging>pom</packaging>" in pom
    assert f"<version>{ns.version(settings)}</version>" in pom
    assert "<artifactId>neo4j-browser</artifactId>" in pom
    assert f"<version>{settings.neo4j_browser_version}</version>" in pom


# --- dry-run parsing ----------------------------------------------------------------------------


def test_parse_dry_run_takes_last_line() -> None:
    out = (
        "Some warning line\n"
        "/usr/lib/jvm/bin/java -cp /i/conf/*:/d/lib/a.jar -XX:+UseG1GC -Xms524288k "
        "org.neo4j.server.CommunityEntryPoint --home-dir=/i --config-dir=/i/conf --console-mode\n"
        "\n"
    )
    argv = ns.parse_dry_run(out)
    assert argv[0] == "/usr/lib/jvm/bin/java"
    assert argv[1:3] == ["-cp", "/i/conf/*:/d/lib/a.jar"]
    assert argv[-4:] == [ns.ENTRY_POINT, "--home-dir=/i", "--config-dir=/i/conf", "--console-mode"]


def test_parse_dry_run_handles_quoted_paths_with_spaces() -> None:
    out = (
        '/usr/bin/java -cp "/my dir/conf/*:/d/lib/a.jar" org.neo4j.server.CommunityEntryPoint '
        '"--home-dir=/my dir" "--config-dir=/my dir/conf" --console-mode'
    )
    argv = ns.parse_dry_run(out)
    assert argv[2] == "/my dir/conf/*:/d/lib/a.jar"
    assert "--home-dir=/my dir" in argv


@pytest.mark.parametrize("out", ["", "\n\n", "Configuration file validation failed.\n"])
def test_parse_dry_run_rejects_unexpected_output(out: str) -> None:
    with pytest.raises(ns.Neo4jServerError):
        ns.parse_dry_run(out)


# --- install ------------------------------------------------------------------------------------


def _no_subprocess(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"unexpected subprocess call: {args}")


def test_install_is_a_no_op_when_complete(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = ns.lib_dir(settings)
    lib.mkdir(parents=True)
    (lib / ns.MARKER).touch()
    monkeypatch.setattr(subprocess, "run", _no_subprocess)
    assert ns.install(settings) == lib


def test_install_names_missing_tools(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    with pytest.raises(ns.Neo4jServerError, match="Maven"):
        ns.install(settings)
    monkeypatch.setattr(shutil, "which", lambda tool: None if tool == "java" else "/x/mvn")
    monkeypatch.setattr(ns, "_JVM_ROOT", Path("/nonexistent"))  # no JDK folders either
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ns.Neo4jServerError, match="Java"):
        ns.install(settings)


def test_install_failure_leaves_no_lib(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: f"/x/{tool}")
    monkeypatch.setattr(ns, "find_java", lambda settings: "/x/java")

    def fake_run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        out = next(a for a in cmd if a.startswith("-DoutputDirectory="))
        Path(out.split("=", 1)[1], "half.jar").parent.mkdir(parents=True)
        return subprocess.CompletedProcess(cmd, 1, "", "Could not resolve dependencies")

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(ns.Neo4jServerError, match="Could not resolve"):
        ns.install(settings)
    root = ns.lib_dir(settings).parent
    assert sorted(p.name for p in root.iterdir()) == ["pom.xml"]


# --- password -----------------------------------------------------------------------------------


def test_password_generated_once_with_mode_0600(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, ...]] = []

    def fake_launcher(s: Settings, main_class: str, *args: str) -> str:
        calls.append(args)
        return ""

    monkeypatch.setattr(ns, "_launcher", fake_launcher)
    password = ns.ensure_password(settings)
    assert password is not None
    assert len(password) >= 8
    assert settings.password_file.read_text(encoding="utf-8").strip() == password
    assert stat.S_IMODE(settings.password_file.stat().st_mode) == 0o600
    # `--` keeps a password that starts with "-" from being read as an option
    assert calls == [("dbms", "set-initial-password", "--", password)]
    # once the system database exists the file is reused and neo4j-admin is not run again
    (ns.instance_dir(settings) / "data" / "databases" / "system").mkdir(parents=True)
    assert ns.ensure_password(settings) == password
    assert len(calls) == 1


def test_failed_set_initial_password_writes_no_file(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_launcher(s: Settings, main_class: str, *args: str) -> str:
        raise ns.Neo4jServerError("neo4j-admin dbms set-initial-password failed (1)")

    monkeypatch.setattr(ns, "_launcher", failing_launcher)
    with pytest.raises(ns.Neo4jServerError):
        ns.ensure_password(settings)
    assert not settings.password_file.exists()


def test_password_missing_after_initialisation_is_an_error(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ns, "_launcher", _no_subprocess)
    (ns.instance_dir(settings) / "data" / "databases" / "system").mkdir(parents=True)
    with pytest.raises(ns.Neo4jServerError, match="wipe"):
        ns.ensure_password(settings)


def test_no_password_without_auth(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ns, "_launcher", _no_subprocess)
    assert ns.ensure_password(settings.model_copy(update={"neo4j_auth": False})) is None
    assert not settings.password_file.exists()


# --- status / stop / wipe without a server ------------------------------------------------------


def test_status_when_not_running(settings: Settings) -> None:
    st = ns.status(settings)
    assert st == ns.ServerStatus(
        running=False,
        pid=None,
        bolt_uri="bolt://127.0.0.1:27687",
        browser_url="http://localhost:27474/browser/",
        version=None,
        instance_dir=ns.instance_dir(settings),
    )


def test_stale_pid_file_is_ignored_and_removed(settings: Settings) -> None:
    pid_file = ns.instance_dir(settings) / "run" / ns.PID_FILE
    pid_file.parent.mkdir(parents=True)
    pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")  # alive, but not a Neo4j server
    assert ns.status(settings).pid is None
    ns.stop(settings)
    assert not pid_file.exists()


def test_wipe_removes_instance_but_refuses_to_touch_dist(settings: Settings) -> None:
    ns.configure(settings)
    ns.wipe(settings)
    assert not ns.instance_dir(settings).exists()
    ns.wipe(settings)  # nothing there: still fine
    nested = settings.model_copy(update={"neo4j_dist_dir": settings.neo4j_instance_dir / "dist"})
    with pytest.raises(ns.Neo4jServerError, match="dist cache"):
        ns.wipe(nested)
