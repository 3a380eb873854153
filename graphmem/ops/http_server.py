"""The HTTP server under the API: uvicorn configured from `Settings` (`server_config`, `run`: every
way of serving goes through them) and the limits it puts on each client connection.

uvicorn bounds neither how long a client may take to send a request nor how many connections a
process holds, so a client that sends its headers a line at a time, or stops halfway through a
body, keeps its connection (and a file descriptor) for as long as it likes. `LimitedHttp`, the
HTTP protocol the server runs, adds per connection (`Settings`, "Input limits"):

- ``header_timeout_s``: the request line and headers must arrive within it, counted from the
  connection's start, or from the first byte of a next request on a kept-alive connection;
- ``max_header_bytes``: a larger header block is answered 431;
- ``body_idle_timeout_s`` and ``body_timeout_s``: the body may pause that long at most, and take
  that long in all; time the server holds the body back (the app has not read what came) does
  not count;
- ``max_connections``: a connection beyond it is answered 503 at once, before anything is read.

Past a limit the client gets a problem+json answer (408, 431, 503) with ``Connection: close``,
unless it had sent nothing yet or an answer had begun (then the connection is only closed), and
the connection is closed. Each cut is counted (``graphmem_http_connections_cut_total``, by
reason) and logged (``graphmem.http``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Literal

import uvicorn
from prometheus_client import Counter
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from graphmem.config import Settings
from graphmem.wire import problem_body

log = logging.getLogger("graphmem.http")
CUT = Counter("graphmem_http_connections_cut", "Client connections the server cut off, by "
              "reason: headers_timeout, headers_too_large, body_timeout, over_capacity",
              ["reason"])
FD_RESERVE = 256
"""File descriptors kept for what is not a client connection: the Neo4j driver's pool (100 by
default), model and log files, the listening socket, subprocesses' pipes."""
REFUSALS_LOG_EVERY_S = 10.0
STARTUP_FAILURE = 3  # uvicorn's exit code when the server could not start

Phase = Literal["headers", "body", "answering", "idle"]
"""Where a connection is: receiving a request's headers, receiving its body, the app's turn
(the request is all in), idle between requests (uvicorn's keep-alive timeout applies)."""


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits `LimitedHttp` enforces on each connection (see the module's docstring)."""

    max_connections: int = 1000
    max_header_bytes: int = 32_768
    header_timeout_s: float = 10.0
    body_idle_timeout_s: float = 30.0
    body_timeout_s: float = 120.0

    @classmethod
    def of(cls, settings: Settings) -> ConnectionLimits:
        return cls(settings.max_connections, settings.max_header_bytes,
                   settings.header_timeout_s, settings.body_idle_timeout_s,
                   settings.body_timeout_s)


class ServerConfig(uvicorn.Config):
    """uvicorn's configuration plus the connection limits (it travels to each worker process
    of ``--workers N`` as it is, so the limits do too)."""

    def __init__(self, app: Any, *, limits: ConnectionLimits, **options: Any) -> None:
        super().__init__(app, **options)
        self.limits = limits


def server_config(app: Any, settings: Settings, *, workers: int = 1,
                  log_level: str | None = None) -> ServerConfig:
    """The server for ``app`` on ``settings.host``:``settings.port`` with the settings' limits.
    ``app`` is an ASGI app, or the import string of a factory each process calls (``workers``
    > 1 needs one)."""
    return ServerConfig(
        app, limits=ConnectionLimits.of(settings), host=settings.host, port=settings.port,
        workers=workers, factory=isinstance(app, str), http=LimitedHttp, log_level=log_level,
        timeout_keep_alive=settings.keep_alive_timeout_s)


def run(app: Any, settings: Settings, *, workers: int = 1) -> None:
    """Serve until SIGINT/SIGTERM, as `uvicorn.run` does, with `server_config`; first the
    process's open-file limit is fitted to ``settings.max_connections`` (`connections_that_fit`;
    worker processes inherit it)."""
    fitted = connections_that_fit(settings.max_connections)
    if fitted != settings.max_connections:
        settings = settings.model_copy(update={"max_connections": fitted})
    config = server_config(app, settings, workers=workers)
    server = uvicorn.Server(config)
    try:
        if workers > 1:
            from uvicorn.supervisors import Multiprocess

            Multiprocess(config, sockets=[config.bind_socket()]).run()
            return
        server.run()
    except KeyboardInterrupt:
        pass
    if workers == 1 and not server.started:
        sys.exit(STARTUP_FAILURE)


def connections_that_fit(wanted: int) -> int:
    """How many client connections this process can hold open: ``wanted``, once the soft limit
    on open files is raised (toward the hard limit) to ``wanted`` + `FD_RESERVE`; fewer, with a
    warning, when the hard limit is lower."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: no such limit to fit
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + FD_RESERVE
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return wanted
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-file limit from %d to %d: %s", soft, target,
                        exc)
    if soft >= needed:
        return wanted
    fits = max(1, soft - FD_RESERVE)
    log.warning("GRAPHMEM_MAX_CONNECTIONS=%d does not fit in the open-file limit (%d, %d kept "
                "for other files): at most %d connections per process; raise `ulimit -n`",
                wanted, soft, FD_RESERVE, fits)
    return fits


def problem_bytes(status: int, title: str, detail: str) -> bytes:
    """A whole HTTP/1.1 response carrying a problem+json body, then ``Connection: close``:
    what the server writes itself when it cuts a connection off."""
    body = json.dumps(problem_body(status, title, detail), ensure_ascii=False,
                      separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/problem+json"),
               (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    if status == 503:
        headers.append((b"retry-after", b"5"))
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n".encode("ascii")]
    lines += [name + b": " + value + b"\r\n" for name, value in headers]
    return b"".join([*lines, b"\r\n", body])


class _Refusals:
    """Logs refused connections at most once per `REFUSALS_LOG_EVERY_S`, with their count."""

    def __init__(self) -> None:
        self.count = 0
        self.logged_at = -REFUSALS_LOG_EVERY_S

    def add(self, cap: int) -> None:
        self.count += 1
        now = time.monotonic()
        if now - self.logged_at >= REFUSALS_LOG_EVERY_S:
            log.warning("new connections refused (503) since the last such line: %d; %d are "
                        "open, the most one process holds (GRAPHMEM_MAX_CONNECTIONS)",
                        self.count, cap)
            self.count, self.logged_at = 0, now


_refusals = _Refusals()


class LimitedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with the connection limits: it refuses a connection over
    the cap, and reports each parsing step to the connection's `_Clock`."""

    clock: _Clock | None = None  # None: refused

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        config = self.config
        limits = config.limits if isinstance(config, ServerConfig) else ConnectionLimits()
        if len(self.connections) >= limits.max_connections:
            CUT.labels("over_capacity").inc()
            _refusals.add(limits.max_connections)
            transport.write(problem_bytes(
                503, "server busy", "the server holds as many connections as it may; retry "
                "later"))
            transport.close()
            return
        super().connection_made(transport)
        self.clock = _Clock(self, limits)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.clock is None:
            return  # refused: nothing of it was set up
        self.clock.stop()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        clock = self.clock
        if clock is None:
            return
        before = clock.phase
        clock.last_data = self.loop.time()
        super().data_received(data)
        if self.transport.get_protocol() is not self:  # upgraded: no longer ours to time
            clock.stop()
            return
        if before != "body" and clock.phase == "headers":  # all of it belongs to one header block
            clock.header_bytes += len(data)
            if clock.header_bytes > clock.limits.max_header_bytes:
                clock.cut("headers_too_large")

    def send_400_response(self, msg: str) -> None:
        """A request that is not HTTP/1.1 (httptools cannot parse it): 400 problem+json, as
        every other refusal, instead of uvicorn's plain text."""
        self.transport.write(problem_bytes(400, "bad request", "the request is not valid "
                                           "HTTP/1.1 (its request line or headers)"))
        self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.clock is not None:
            self.clock.headers_begin()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.clock is not None:
            self.clock.body_begin()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if self.clock is not None:
            self.clock.body_end()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.clock is not None:
            self.clock.answered()


class _Clock:
    """The deadlines of one connection. A timer runs while the connection waits for the
    client (headers, body); when it fires the deadline is read again (data that came since
    moved it) and the connection is cut only if it has passed."""

    def __init__(self, conn: LimitedHttp, limits: ConnectionLimits) -> None:
        self.conn = conn
        self.limits = limits
        self.loop = conn.loop
        self.phase: Phase = "headers"  # a new connection: its first headers are due
        self.began = False  # a byte of the current request came
        self.since = self.last_data = self.loop.time()
        self.header_bytes = 0
        self.requests = self.responses = 0  # header blocks received; responses completed
        self.timer: asyncio.TimerHandle | None = None
        self._arm()

    # --- the parser's steps ---
    def headers_begin(self) -> None:
        self.began = True
        if self.phase != "headers":  # a next request (the first one's clock runs already)
            self._enter("headers")

    def body_begin(self) -> None:
        self.requests += 1
        self.began = False
        self._enter("body")

    def body_end(self) -> None:
        if self.phase == "body":
            self._enter("answering" if self.responses < self.requests else "idle")

    def answered(self) -> None:
        self.responses += 1
        if self.phase == "answering" and self.responses >= self.requests:
            self._enter("idle")
        # "body": answered before the body was all in; the body's deadlines still hold

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    # --- deadlines ---
    def _enter(self, phase: Phase) -> None:
        self.phase = phase
        self.since = self.last_data = self.loop.time()
        self.header_bytes = 0
        self._arm()

    def _deadline(self) -> float | None:
        if self.phase == "headers":
            return self.since + self.limits.header_timeout_s
        if self.phase == "body":
            return min(self.last_data + self.limits.body_idle_timeout_s,
                       self.since + self.limits.body_timeout_s)
        return None

    def _arm(self) -> None:
        self.stop()
        deadline = self._deadline()
        if deadline is not None:
            self.timer = self.loop.call_at(deadline, self._expire)

    def _servers_turn(self) -> bool:
        """The body waits on the server, not the client: reading is paused (the app has not
        taken what came) or the client waits for ``100 Continue``."""
        cycle = self.conn.cycle
        return self.conn.flow.read_paused or (
            cycle is not None and cycle.waiting_for_100_continue)

    def _expire(self) -> None:
        self.timer = None
        if self.conn.transport.is_closing():
            return
        now = self.loop.time()
        if self.phase == "body" and self._servers_turn():
            self.last_data = now  # the client gets a whole pause, and the total a pause more
            self.since = max(self.since, now + self.limits.body_idle_timeout_s
                             - self.limits.body_timeout_s)
        deadline = self._deadline()
        if deadline is None:
            return
        if now + 0.001 < deadline:
            self.timer = self.loop.call_at(deadline, self._expire)
            return
        self.cut("headers_timeout" if self.phase == "headers" else "body_timeout")

    # --- cutting off ---
    def cut(self, reason: str) -> None:
        """Answer (when the client is owed one and nothing else is being written), then close."""
        conn, limits = self.conn, self.limits
        self.stop()
        CUT.labels(reason).inc()
        client = f"{conn.client[0]}:{conn.client[1]}" if conn.client else "?"
        answer: bytes | None = None
        if reason == "headers_too_large":
            log.info("%s: headers over %d bytes, connection closed", client,
                     limits.max_header_bytes)
            if self.responses >= self.requests:
                answer = problem_bytes(431, "request header fields too large",
                                       f"the request's line and headers exceed "
                                       f"{limits.max_header_bytes} bytes")
        elif reason == "headers_timeout":
            log.info("%s: no whole header block within %g s, connection closed", client,
                     limits.header_timeout_s)
            if self.began and self.responses >= self.requests:
                answer = problem_bytes(408, "request timeout", f"the request's line and "
                                       f"headers did not arrive within "
                                       f"{limits.header_timeout_s:g} s")
        else:
            log.info("%s: request body stalled (over %g s without data or %g s in all), "
                     "connection closed", client, limits.body_idle_timeout_s,
                     limits.body_timeout_s)
            cycle = conn.cycle
            if cycle is not None and not cycle.response_started:
                cycle.disconnected = True  # the app's reads end, its answer goes nowhere
                cycle.message_event.set()
                if self.responses + 1 >= self.requests:  # no earlier answer being written
                    answer = problem_bytes(408, "request timeout", "the request body did not "
                                           f"arrive in time: no data for "
                                           f"{limits.body_idle_timeout_s:g} s, or not all "
                                           f"within {limits.body_timeout_s:g} s")
        if answer is not None:
            conn.transport.write(answer)
        conn.transport.close()
