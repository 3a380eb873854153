"""The server processes graphmem starts and stops for you (Neo4j, the local LLM): whether one is
alive, signalling its process group, waiting for its exit, a loopback port check, an exclusive
start lock and the tail of its log. Plain OS calls, no graphmem state."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
"""Servers this process started, by pid: polled (and so reaped) instead of signalled."""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as dead)."""
    child = CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"  # zombie = dead


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal a server started with ``start_new_session`` (its process group id is its pid)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def wait_exit(pid: int, timeout_s: float) -> bool:
    """Wait until ``pid`` is gone; False if it still runs after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def port_open(port: int) -> bool:
    """Whether something accepts connections on this loopback port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created with its folder): serialises `start` calls."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def tail(path: Path, n: int, missing: str = "(missing)") -> str:
    """The last ``n`` lines of a log file, or ``missing``."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return missing
    return "\n".join(lines[-n:])
