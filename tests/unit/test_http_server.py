"""`graphmem.ops.http_server` without a socket: the uvicorn configuration every way of serving uses
carries the settings' limits (to worker processes too), and the open-file limit is fitted to the
connection cap. The limits at work over real connections: tests/integration/test_slow_clients.py.
"""

from __future__ import annotations

import pickle
import resource
from typing import Any

import pytest

from graphmem.config import Settings
from graphmem.ops import http_server
from graphmem.ops.http_server import ConnectionLimits, LimitedHttp, server_config


def test_the_settings_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"MAX_CONNECTIONS": "50", "MAX_HEADER_BYTES": "8192",
                        "HEADER_TIMEOUT_S": "2.5", "BODY_IDLE_TIMEOUT_S": "7",
                        "BODY_TIMEOUT_S": "60", "KEEP_ALIVE_TIMEOUT_S": "15"}.items():
        monkeypatch.setenv(f"GRAPHMEM_{name}", value)
    config = server_config("graphmem.api.app:app_from_environment", Settings(), workers=2)
    assert config.limits == ConnectionLimits(50, 8192, 2.5, 7.0, 60.0)
    assert config.timeout_keep_alive == 15 and config.http is LimitedHttp
    assert config.factory and config.workers == 2
    copy = pickle.loads(pickle.dumps(config))  # as it travels to each worker process
    assert copy.limits == config.limits and copy.http is LimitedHttp


def test_the_defaults() -> None:
    config = server_config(object(), Settings(host="127.0.0.1", port=8123))
    assert config.limits == ConnectionLimits()
    assert (config.host, config.port, config.factory) == ("127.0.0.1", 8123, False)
    assert config.timeout_keep_alive == 5


class Limits:
    """A stand-in for the process's open-file limit."""

    def __init__(self, soft: int, hard: int, raisable: bool = True) -> None:
        self.soft, self.hard, self.raisable = soft, hard, raisable

    def get(self, _: int) -> tuple[int, int]:
        return self.soft, self.hard

    def set(self, _: int, limits: tuple[int, int]) -> None:
        if not self.raisable:
            raise ValueError("not allowed")
        self.soft, self.hard = limits


@pytest.mark.parametrize(("soft", "hard", "raisable", "fits", "soft_after"), [
    (20_000, 20_000, True, 1000, 20_000),  # room already
    (1024, 524_288, True, 1000, 1000 + http_server.FD_RESERVE),  # raised to fit
    (1024, resource.RLIM_INFINITY, True, 1000, 1000 + http_server.FD_RESERVE),
    (1024, 1024, True, 1024 - http_server.FD_RESERVE, 1024),  # the hard limit is lower
    (1024, 524_288, False, 1024 - http_server.FD_RESERVE, 1024),  # raising refused
])
def test_the_open_file_limit_is_fitted_to_the_connection_cap(
    monkeypatch: pytest.MonkeyPatch, soft: int, hard: int, raisable: bool, fits: int,
    soft_after: int,
) -> None:
    limits = Limits(soft, hard, raisable)
    monkeypatch.setattr(resource, "getrlimit", limits.get)
    monkeypatch.setattr(resource, "setrlimit", limits.set)
    assert http_server.connections_that_fit(1000) == fits
    assert limits.soft == soft_after


def test_a_problem_written_by_the_server_is_a_whole_http_response() -> None:
    raw = http_server.problem_bytes(503, "server busy", "retry later")
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 503 Service Unavailable"
    headers: dict[bytes, Any] = dict(line.lower().split(b": ", 1) for line in lines[1:])
    assert headers[b"content-type"] == b"application/problem+json"
    assert headers[b"connection"] == b"close" and headers[b"retry-after"] == b"5"
    assert int(headers[b"content-length"]) == len(body)
    assert b'"status":503' in body
