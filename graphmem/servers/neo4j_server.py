"""A local Neo4j Community server, assembled from Maven Central (no Docker, no tarball needed).

`install` caches the jars per version in ``neo4j_dist_dir``; `configure` writes the instance's
``conf/neo4j.conf``; `start` / `stop` / `status` / `wipe` manage one server per instance dir.
`version` says which Neo4j an instance runs: the one pinned in its dir at its first start (a
store written by one line cannot be opened by an older one), else the newest line a Java here
runs.
The jars stay in the dist dir: the launcher is run with ``-cp <dist>/lib/*`` and
``-Dbasedir=<instance>``, and its ``--dry-run`` output keeps that classpath, so the instance
needs no ``lib/``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from graphmem.config import NEO4J_VERSION, NEO4J_VERSION_2026, Settings
from graphmem.servers import processes

PID_FILE = "graphmem-neo4j.pid"
VERSION_FILE = "graphmem-neo4j.version"
MARKER = ".complete"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"  # 5.x
ENTRY_POINTS = (ENTRY_POINT, "org.neo4j.server.Neo4jCommunity")  # and 2025.x or later
_NEO4J_CMD = "org.neo4j.server.startup.Neo4jCommand"
_ADMIN_CMD = "org.neo4j.server.startup.Neo4jAdminCommand"
# The options of Neo4j's shipped neo4j.conf (JAVA_OPTS would replace them all, so it is unset).
_JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    # Lucene scores vectors with the Java Vector API when this module is readable (Java 20+;
    # an older Java ignores it): measured on LoCoMo dev (2 processes, 8 clients), Neo4j's CPU
    # per search 4.0-4.2 -> 3.4-3.8 ms together with unquantised vector indexes (README)
    "--add-modules=jdk.incubator.vector",
)
_JVM_ROOT = Path("/usr/lib/jvm")  # where Debian's (and Temurin's) packages put their JDKs
_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>graphmem.local</groupId>
  <artifactId>neo4j-dist</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId>
      <version>{version}</version></dependency>
    <dependency><groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId>
      <version>{browser}</version></dependency>
  </dependencies>
</project>
"""
# The servers this process launched, kept so they are reaped (no zombie, no ResourceWarning).


class Neo4jServerError(RuntimeError):
    """Installing, configuring, starting or stopping the local Neo4j server failed."""


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    bolt_uri: str
    browser_url: str
    version: str | None
    instance_dir: Path


def instance_dir(settings: Settings) -> Path:
    return settings.neo4j_instance_dir.expanduser().resolve()


def lib_dir(settings: Settings) -> Path:
    return settings.neo4j_dist_dir.expanduser().resolve() / version(settings) / "lib"


def pinned_version(settings: Settings) -> str | None:
    """The version the instance dir was started with; for a store initialised before versions
    were pinned, the 5.26 line (the only default until then)."""
    try:
        return (instance_dir(settings) / VERSION_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return NEO4J_VERSION if _is_initialised(settings) else None


def version(settings: Settings) -> str:
    """The Neo4j version this instance runs: the setting when it names one (checked against
    the pin of an initialised store), else the pinned one, else 2026 if a Java 21+ is found
    (under ``neo4j_java_home`` when set), else 5.26."""
    pinned = pinned_version(settings)
    if settings.neo4j_version != "auto":
        if pinned is not None and pinned != settings.neo4j_version and _is_initialised(settings):
            raise Neo4jServerError(
                f"the store in {instance_dir(settings)} was written by Neo4j {pinned}, not "
                f"{settings.neo4j_version}: leave GRAPHMEM_NEO4J_VERSION unset (or {pinned}), "
                "give the other version its own GRAPHMEM_NEO4J_INSTANCE_DIR, or move the data "
                "with neo4j-admin database dump/load"
            )
        return settings.neo4j_version
    if pinned is not None:
        return pinned
    newest = _java_for(NEO4J_VERSION_2026, settings.neo4j_java_home)
    return NEO4J_VERSION_2026 if newest is not None else NEO4J_VERSION


def _pin(settings: Settings) -> None:
    """Record the version the instance runs, before its store is first written."""
    chosen, path = version(settings), instance_dir(settings) / VERSION_FILE
    if not path.exists() or path.read_text(encoding="utf-8").strip() != chosen:
        path.write_text(chosen + "\n", encoding="utf-8")


def _pid_file(settings: Settings) -> Path:
    return instance_dir(settings) / "run" / PID_FILE


def _require(tool: str, hint: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise Neo4jServerError(f"`{tool}` not found on PATH: install {hint}")
    return found


def java_range(neo4j_version: str) -> tuple[int, int | None]:
    """The Java feature releases a Neo4j version runs on: (lowest, highest or None)."""
    head = neo4j_version.split(".", 1)[0]
    return (21, None) if head.isdigit() and int(head) >= 2025 else (17, 21)


@cache
def java_release(java: str) -> int | None:
    """The feature release of a ``java`` executable (17, 21, 25, ...); None if it does not run."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if done.returncode != 0 or found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major  # "1.8" is Java 8


def _java_for(neo4j_version: str, java_home: Path | None) -> str | None:
    """The first ``java`` this Neo4j version runs on: under ``java_home`` if given, else among
    JAVA_HOME, ``java`` on PATH and the JDKs under /usr/lib/jvm (newest first); None if none."""
    low, high = java_range(neo4j_version)

    def fits(release: int | None) -> bool:
        return release is not None and release >= low and (high is None or release <= high)

    if java_home is not None:
        java = str(java_home.expanduser() / "bin" / "java")
        return java if fits(java_release(java)) else None
    candidates: list[str] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    if (on_path := shutil.which("java")) is not None:
        candidates.append(on_path)
    jdks = [str(p) for p in _JVM_ROOT.glob("*/bin/java")] if _JVM_ROOT.is_dir() else []
    candidates += sorted(jdks, key=lambda j: java_release(j) or 0, reverse=True)
    return next((found for found in candidates if fits(java_release(found))), None)


def find_java(settings: Settings) -> str:
    """The ``java`` that runs this instance's Neo4j version: ``neo4j_java_home`` if set
    (checked), else the first fit among JAVA_HOME, ``java`` on PATH and the JDKs under
    /usr/lib/jvm (newest first)."""
    wanted_version = version(settings)
    low, high = java_range(wanted_version)
    wanted = f"Java {low} or later" if high is None else f"Java {low} to {high}"
    java = _java_for(wanted_version, settings.neo4j_java_home)
    if java is not None:
        return java
    if settings.neo4j_java_home is not None:
        release = java_release(str(settings.neo4j_java_home.expanduser() / "bin" / "java"))
        found = "no runnable bin/java" if release is None else f"Java {release}"
        raise Neo4jServerError(
            f"GRAPHMEM_NEO4J_JAVA_HOME={settings.neo4j_java_home} has {found}; Neo4j "
            f"{wanted_version} needs {wanted}"
        )
    raise Neo4jServerError(
        f"Neo4j {wanted_version} needs {wanted}, and none was found (JAVA_HOME, `java` "
        f"on PATH, {_JVM_ROOT}/*): install one (e.g. `apt-get install openjdk-{low}-jre-headless`)"
        " or set GRAPHMEM_NEO4J_JAVA_HOME to its folder"
    )


def render_pom(settings: Settings) -> str:
    return _POM.format(version=version(settings), browser=settings.neo4j_browser_version)


def install(settings: Settings) -> Path:
    """Assemble the Neo4j jars into ``<dist>/<version>/lib`` (once); return that lib dir."""
    lib = lib_dir(settings)
    if (lib / MARKER).exists():
        return lib
    mvn = _require("mvn", "Apache Maven 3.8+ (e.g. `apt-get install maven`)")
    find_java(settings)  # fail before the download when no Java fits
    root = lib.parent
    root.mkdir(parents=True, exist_ok=True)
    (root / "pom.xml").write_text(render_pom(settings), encoding="utf-8")
    tmp = root / f"lib.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [
        mvn,
        "-q",
        "-B",
        "-Dstyle.color=never",
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        "-DexcludeTypes=pom",
        f"-DoutputDirectory={tmp}",
    ]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        output = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
        raise Neo4jServerError(f"mvn could not fetch Neo4j {version(settings)}:\n{output}")
    (tmp / MARKER).touch()
    if lib.exists() and not (lib / MARKER).exists():
        shutil.rmtree(lib)  # left over from an older, interrupted layout
    try:
        tmp.rename(lib)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
        if not (lib / MARKER).exists():
            raise
    return lib


def render_conf(settings: Settings, post_connect_cmd: str | None = None) -> str:
    """The instance's neo4j.conf (Neo4j validates it strictly: unknown or repeated keys fail)."""
    home = instance_dir(settings)
    bolt, http = settings.neo4j_bolt_port, settings.neo4j_http_port
    lines = [f"server.directories.{d}={home / d}" for d in ("data", "logs", "plugins", "run")]
    lines += [
        f"server.directories.import={home / 'import'}",  # unset = LOAD CSV reads any file
        "server.default_listen_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{bolt}",
        f"server.bolt.advertised_address=localhost:{bolt}",
        f"server.http.listen_address=127.0.0.1:{http}",
        f"server.http.advertised_address=localhost:{http}",
        "server.https.enabled=false",
        f"server.memory.heap.initial_size={settings.neo4j_heap}",
        f"server.memory.heap.max_size={settings.neo4j_heap}",
        f"server.memory.pagecache.size={settings.neo4j_pagecache}",
        "dbms.usage_report.enabled=false",
        "client.allow_telemetry=false",
        "db.tx_log.rotation.retention_policy=1 files",
        f"dbms.security.auth_enabled={'true' if settings.neo4j_auth else 'false'}",
    ]
    if post_connect_cmd is not None:
        if "\n" in post_connect_cmd or "\r" in post_connect_cmd:
            raise ValueError("post_connect_cmd must be a single line")
        lines.append(f"browser.post_connect_cmd={post_connect_cmd}")
    lines.append("browser.remote_content_hostname_whitelist=localhost,127.0.0.1")
    lines += [f"server.jvm.additional={opt}" for opt in _JVM_OPTIONS]
    return "\n".join(lines) + "\n"


def configure(settings: Settings, post_connect_cmd: str | None = None) -> Path:
    """Create the instance folders and (re)write ``conf/neo4j.conf``; return the conf path."""
    home = instance_dir(settings)
    for sub in ("conf", "data", "logs", "run", "plugins", "import"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    conf = home / "conf" / "neo4j.conf"
    conf.write_text(render_conf(settings, post_connect_cmd), encoding="utf-8")
    return conf


def _env(settings: Settings, java: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_OPTS"}  # it replaces all options
    env["JAVA_HOME"] = str(Path(java).resolve().parent.parent)  # the launcher starts its java
    env["NEO4J_HOME"] = str(instance_dir(settings))
    env["NEO4J_CONF"] = str(instance_dir(settings) / "conf")
    return env


def _launcher(settings: Settings, main_class: str, *args: str) -> str:
    """Run a Neo4j launcher class on the dist jars with the instance as home; return stdout."""
    java = find_java(settings)
    cmd = [
        java,
        "-cp",
        f"{lib_dir(settings)}/*",
        f"-Dbasedir={instance_dir(settings)}",
        main_class,
        *args,
    ]
    done = subprocess.run(cmd, env=_env(settings, java), capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        tool = "neo4j-admin" if main_class == _ADMIN_CMD else "neo4j"
        shown = " ".join(args[:2])  # never the password
        raise Neo4jServerError(
            f"{tool} {shown} failed ({done.returncode}):\n{done.stdout}{done.stderr}".rstrip()
        )
    return done.stdout


def parse_dry_run(stdout: str) -> list[str]:
    """The server command printed (last line) by ``neo4j console --dry-run``."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    argv = shlex.split(lines[-1]) if lines else []
    if not argv or not set(ENTRY_POINTS) & set(argv):
        raise Neo4jServerError(f"unexpected output of `neo4j console --dry-run`:\n{stdout}")
    return argv


def server_command(settings: Settings) -> list[str]:
    return parse_dry_run(_launcher(settings, _NEO4J_CMD, "console", "--dry-run"))


def _is_initialised(settings: Settings) -> bool:
    return (instance_dir(settings) / "data" / "databases" / "system").exists()


def ensure_password(settings: Settings) -> str | None:
    """Make sure the instance has a password (file mode 0600) before its first start."""
    if not settings.neo4j_auth:
        return None
    pw_file = settings.password_file
    if pw_file.exists():
        password = pw_file.read_text(encoding="utf-8").strip()
    elif _is_initialised(settings):
        raise Neo4jServerError(
            f"{pw_file} is missing but the database in {instance_dir(settings)} already exists, "
            "so its password can no longer be set: restore the file or wipe the instance"
        )
    else:
        given = settings.neo4j_password
        password = given.get_secret_value() if given else secrets.token_urlsafe(18)
    if not _is_initialised(settings):  # `--`: a password may start with "-"
        _launcher(settings, _ADMIN_CMD, "dbms", "set-initial-password", "--", password)
    if not pw_file.exists():
        pw_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(pw_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(password + "\n")
    return password


def _our_pid(settings: Settings) -> int | None:
    """The pid from our pid file if that process is alive and is this instance's server."""
    try:
        pid = int(_pid_file(settings).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return pid if processes.alive(pid) and _is_our_server(pid, settings) else None


def _is_our_server(pid: int, settings: Settings) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return True  # no /proc: trust the pid file
    homes = [a.removeprefix("--home-dir=") for a in argv if a.startswith("--home-dir=")]
    ours = any(Path(h).resolve() == instance_dir(settings) for h in homes)
    return ours and bool(set(ENTRY_POINTS) & set(argv))


def _discovery(settings: Settings) -> dict[str, Any] | None:
    url = f"http://127.0.0.1:{settings.neo4j_http_port}/"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=2.0) as response:
            data = json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "bolt_direct" in data else None


def _failure(settings: Settings, what: str) -> Neo4jServerError:
    logs = instance_dir(settings) / "logs"
    return Neo4jServerError(
        f"{what}\n--- {logs / 'console.log'} ---\n{processes.tail(logs / 'console.log', 40)}\n"
        f"--- {logs / 'neo4j.log'} ---\n{processes.tail(logs / 'neo4j.log', 40)}"
    )


def status(settings: Settings) -> ServerStatus:
    pid = _our_pid(settings)
    info = _discovery(settings) if pid is not None else None
    version = info.get("neo4j_version") if info else None
    return ServerStatus(
        running=info is not None,
        pid=pid,
        bolt_uri=f"bolt://127.0.0.1:{settings.neo4j_bolt_port}",
        browser_url=f"http://localhost:{settings.neo4j_http_port}/browser/",
        version=str(version) if version is not None else None,
        instance_dir=instance_dir(settings),
    )


def _wait_ready(settings: Settings, pid: int) -> ServerStatus:
    deadline = time.monotonic() + settings.neo4j_start_timeout_s
    while time.monotonic() < deadline:
        if not processes.alive(pid):
            _pid_file(settings).unlink(missing_ok=True)
            raise _failure(settings, f"Neo4j (pid {pid}) exited during start-up")
        if _discovery(settings) is not None and processes.port_open(settings.neo4j_bolt_port):
            return status(settings)
        time.sleep(0.5)
    stop(settings)
    raise _failure(settings, f"Neo4j did not answer within {settings.neo4j_start_timeout_s}s")


def _check_ports_free(settings: Settings) -> None:
    for name, port in (("Bolt", settings.neo4j_bolt_port), ("HTTP", settings.neo4j_http_port)):
        if processes.port_open(port):
            raise Neo4jServerError(
                f"{name} port 127.0.0.1:{port} is in use by another process (not the graphmem "
                f"server of {instance_dir(settings)}): stop it or pick other ports "
                "(GRAPHMEM_NEO4J_BOLT_PORT / GRAPHMEM_NEO4J_HTTP_PORT)"
            )


def start(settings: Settings, post_connect_cmd: str | None = None) -> ServerStatus:
    """Start this instance's server (installing it first if needed); wait until Bolt answers."""
    with processes.exclusive(instance_dir(settings) / "run" / "graphmem-neo4j.lock"):
        return _start_locked(settings, post_connect_cmd)


def _start_locked(settings: Settings, post_connect_cmd: str | None) -> ServerStatus:
    version(settings)  # another version than the store's fails here, running or not
    pid = _our_pid(settings)
    if pid is not None:  # already ours: running, or still starting
        return _wait_ready(settings, pid)
    _pid_file(settings).unlink(missing_ok=True)
    _check_ports_free(settings)
    install(settings)
    configure(settings, post_connect_cmd)
    _pin(settings)
    ensure_password(settings)
    argv = server_command(settings)
    home = instance_dir(settings)
    with (home / "logs" / "console.log").open("wb") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=home,
            env=_env(settings, find_java(settings)),
            start_new_session=True,
        )
    processes.CHILDREN[proc.pid] = proc
    _pid_file(settings).write_text(f"{proc.pid}\n", encoding="utf-8")
    return _wait_ready(settings, proc.pid)


def stop(settings: Settings, timeout: float = 60.0) -> None:
    """SIGTERM the server's process group, SIGKILL after `timeout`; no error if not running."""
    pid = _our_pid(settings)
    if pid is not None:
        processes.signal_group(pid, signal.SIGTERM)
        if not processes.wait_exit(pid, timeout):
            processes.signal_group(pid, signal.SIGKILL)
            processes.wait_exit(pid, 10.0)
        processes.CHILDREN.pop(pid, None)
    _pid_file(settings).unlink(missing_ok=True)


def wipe(settings: Settings) -> None:
    """Stop the server and delete the instance dir (data, logs, password). Keeps the dist cache."""
    home = instance_dir(settings)
    dist = settings.neo4j_dist_dir.expanduser().resolve()
    if dist == home or dist.is_relative_to(home):
        raise Neo4jServerError(f"refusing to wipe {home}: it contains the dist cache {dist}")
    stop(settings)
    if home.exists():
        shutil.rmtree(home)
