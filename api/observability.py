"""Operations: request ids, one log line per request (text or JSON), HTTP metrics, ``/metrics``,
``/readyz`` and optional OpenTelemetry traces. `install(app, settings, runtime)` wires it all.

The library's own instruments (ingest, search, embedding, Neo4j errors) are in
`graphmem.metrics`; this module adds the HTTP side and serves them.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from graphmem import __version__
from graphmem.config import Settings, is_loopback
from graphmem.errors import GraphMemError, SchemaMismatch
from graphmem.metrics import LATENCY_BUCKETS, JobQueueCollector
from graphmem.service import Memory

from .auth import KeyRing, caller
from .problems import problem

Scope = dict[str, Any]
HEADER = "X-Request-ID"
SAFE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
JOB_COUNT_CAP = 100_000  # per state; a gauge at the cap means "at least"
JOB_COUNTS_TTL_S = 5.0
UNMATCHED = "unmatched"  # the route label when no route served the request (never a raw path)
_tracing = False  # set by `install` when GRAPHMEM_OTEL_ENABLED: log records get trace_id

log = logging.getLogger("graphmem.request")
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "graphmem_request_id", default=None)

HTTP_REQUESTS = Counter(
    "graphmem_http_requests", "HTTP requests, by method, route template and status",
    ["method", "route", "status"])
HTTP_SECONDS = Histogram(
    "graphmem_http_request_duration_seconds", "HTTP request latency, by method, route template "
    "and status", ["method", "route", "status"], buckets=LATENCY_BUCKETS)
HTTP_IN_PROGRESS = Gauge("graphmem_http_requests_in_progress", "HTTP requests being served")
INFO = Gauge("graphmem_info", "graphmem's version", ["version"])
INFO.labels(__version__).set(1)


class Runtime(Protocol):
    """What readiness needs from the app's runtime (api.deps.Runtime)."""

    memory: Memory | None
    ready: bool

    def ready_memory(self) -> Memory: ...


# --- request ids and logs ---------------------------------------------------------------------
def incoming_id(value: str | None) -> str:
    """The client's ``X-Request-ID`` when it is a short safe token, else a new one."""
    if value is not None and SAFE_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


class _RequestContext(logging.Filter):
    """Adds ``request_id`` (and, with tracing on, ``trace_id``) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        if _tracing:
            from opentelemetry import trace

            context = trace.get_current_span().get_span_context()
            if context.is_valid:
                record.trace_id = f"{context.trace_id:032x}"
        return True


_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message", "asctime", "request_id", "taskName", "color_message"}  # uvicorn's coloured copy


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC), level, logger, message, request_id, the record's extra
    fields (a request line's method, route, status, duration_ms, tenant) and exc."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
        }
        if (rid := getattr(record, "request_id", None)) is not None:
            out["request_id"] = rid
        out.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", None) is None:
            record.request_id = "-"
        return super().format(record)


class _Handler(logging.StreamHandler[TextIO]):
    """graphmem's handler on the root logger; writes to the current ``sys.stderr``."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


def configure_logging(settings: Settings) -> None:
    """Root logging in ``settings.log_format`` at ``settings.log_level``; idempotent (a second
    call replaces graphmem's handler, other handlers stay)."""
    level = logging.getLevelName(settings.log_level.upper())
    if not isinstance(level, int):
        raise ValueError(f"GRAPHMEM_LOG_LEVEL={settings.log_level!r}: use DEBUG, INFO, WARNING "
                         "or ERROR")
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    handler = _Handler()
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else _TextFormatter(
        "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    handler.addFilter(_RequestContext())
    root.addHandler(handler)
    root.setLevel(level)


def _adopt_server_loggers() -> None:
    """uvicorn configures its loggers after the app is built: send its messages through
    graphmem's handler (one format), and drop its access line (ours replaces it)."""
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("uvicorn.access").disabled = True


# --- tracing ----------------------------------------------------------------------------------
def enable_tracing() -> None:
    """Install an OpenTelemetry SDK tracer provider exporting over OTLP/HTTP (endpoint, headers,
    service name from the standard OTEL_* variables). A provider already installed by the host
    process is kept. Missing packages are a start-up error naming the fix.

    HTTP server spans are FastAPI's own (built in since 0.142, on whenever a provider is
    installed: route templates, ``traceparent`` continued); graphmem adds its spans below them
    (`graphmem.metrics.span`: ``graphmem.messages.ingest``, ``graphmem.search``)."""
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise RuntimeError(
            f"GRAPHMEM_OTEL_ENABLED=true but OpenTelemetry is not installed ({exc.name} is "
            "missing). Fix: pip install 'graphmem[otel]', or set GRAPHMEM_OTEL_ENABLED=false"
        ) from exc
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return
    named = "OTEL_SERVICE_NAME" in os.environ or "service.name" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(resource=Resource.create({} if named else {
        "service.name": "graphmem"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


# --- the middleware ---------------------------------------------------------------------------
class RequestObserver:
    """Pure ASGI middleware, outermost: request id (in, contextvar, out on every response), the
    request's metrics and its log line."""

    def __init__(self, app: Any, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys  # the tenant label of a request's metrics

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            _adopt_server_loggers()
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        raw = headers.get(b"x-request-id")
        rid = incoming_id(raw.decode("latin-1") if raw is not None else None)
        token = request_id.set(rid)
        method = scope.get("method", "")
        method = method if method in METHODS else "other"  # a label value set by clients: bounded
        status = 500  # unless a response starts
        id_header = (HEADER.lower().encode(), rid.encode())

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                kept = [h for h in message.get("headers", []) if h[0].lower() != id_header[0]]
                message = {**message, "headers": [*kept, id_header]}
            await send(message)

        if _tracing:  # FastAPI's own server span is current: tag it with the id
            from opentelemetry import trace

            trace.get_current_span().set_attribute("graphmem.request_id", rid)
        start = time.perf_counter()
        HTTP_IN_PROGRESS.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            HTTP_IN_PROGRESS.dec()
            route = self.route(scope)
            seconds = time.perf_counter() - start
            labels = (method, route, str(status))
            HTTP_REQUESTS.labels(*labels).inc()
            HTTP_SECONDS.labels(*labels).observe(seconds)
            log.info("%s %s %d %.1f ms", method, route, status, seconds * 1000, extra={
                "method": method, "route": route, "status": status,
                "duration_ms": round(seconds * 1000, 2),
                **self.who(scope),
            })
            request_id.reset(token)

    @staticmethod
    def route(scope: Scope) -> str:
        """The template of the route that served the request (``/v1/search``,
        ``/v1/messages/{message_id:path}``), or ``unmatched``: no route (404), or a middleware
        answered before routing (401 without a valid key, 413 too large)."""
        found = getattr(scope.get("route"), "path", None)
        return found if isinstance(found, str) and found else UNMATCHED

    def who(self, scope: Scope) -> dict[str, str | None]:
        """The request's ``tenant`` (under ``/v1``, with a valid key) and ``key`` (the public id
        of its bearer key, known or not, under ``/v1`` and ``/mcp``) for its log line."""
        path = scope.get("path", "")
        if not path.startswith(("/v1", "/mcp")):
            return {"tenant": None, "key": None}
        found = caller(self.keys, scope)
        tenant = found.access.tenant if found.access and path.startswith("/v1") else None
        return {"tenant": tenant, "key": found.key_id}


# --- readiness --------------------------------------------------------------------------------
def readiness(runtime: Runtime) -> tuple[dict[str, str], dict[str, str]]:
    """(checks, missing): each dependency's state, and what is missing with a reason that never
    names Neo4j's address (details go to the log)."""
    checks = {"embedding_model": "not checked", "neo4j": "not checked", "schema": "not checked"}
    missing: dict[str, str] = {}
    memory = runtime.memory
    if memory is None:
        missing["embedding_model"] = "the embedding model is not loaded"
        return _marked(checks, missing), missing
    checks["embedding_model"] = "ok"
    try:
        memory.ping()
    except GraphMemError as exc:
        log.warning("readyz: neo4j: %s", exc.detail)
        missing["neo4j"] = "Neo4j is unreachable"
        return _marked(checks, missing), missing
    checks["neo4j"] = "ok"
    try:
        states = memory.index_states()
        pending = sorted(name for name, state in states.items() if state != "ONLINE")
        if pending:
            missing["schema"] = f"indexes not ONLINE: {', '.join(pending)}"
        elif not runtime.ready:
            runtime.ready_memory()  # applies the schema; quick once the indexes exist
    except SchemaMismatch as exc:
        log.warning("readyz: schema: %s", exc.detail)
        missing["schema"] = "the database does not match the configured embedding model (see "\
            "the server log)"
    except GraphMemError as exc:  # unreachable meanwhile, or indexes slow to come ONLINE
        log.warning("readyz: schema: %s", exc.detail)
        missing["schema"] = "the schema is not applied yet (see the server log)"
    else:
        if "schema" not in missing:
            checks["schema"] = "ok"
    return _marked(checks, missing), missing


def _marked(checks: dict[str, str], missing: dict[str, str]) -> dict[str, str]:
    return {**checks, **{name: "missing" for name in missing}}


# --- wiring -----------------------------------------------------------------------------------
def install(app: FastAPI, settings: Settings, runtime: Runtime, keys: KeyRing) -> None:
    """Logging, tracing, the request middleware (call it after the other middlewares, so it is
    the outermost), ``/readyz`` and, when enabled, ``/metrics``."""
    configure_logging(settings)
    global _tracing
    if settings.otel_enabled:
        enable_tracing()
        _tracing = True
    app.add_middleware(RequestObserver, keys=keys)

    @app.get("/readyz", tags=["operations"])
    def readyz() -> JSONResponse:
        """No key needed. 200 when the embedding model is loaded, Neo4j answers and the schema
        is applied with every index ONLINE; else 503 naming what is missing."""
        checks, missing = readiness(runtime)
        if missing:
            detail = "; ".join(f"{name}: {why}" for name, why in missing.items())
            return problem(503, "not ready", detail, checks=checks, missing=sorted(missing))
        return JSONResponse({"status": "ready", "version": __version__, "checks": checks})

    if not settings.metrics_enabled:
        return
    jobs = CollectorRegistry()

    def job_counts() -> dict[str, int]:
        if runtime.memory is None:
            raise RuntimeError("not started")
        return runtime.memory.job_counts_all(JobQueueCollector.STATES, JOB_COUNT_CAP)

    jobs.register(JobQueueCollector(job_counts, JOB_COUNTS_TTL_S))

    @app.get("/metrics", tags=["operations"], response_class=Response)
    def metrics(request: Request) -> Response:
        """Prometheus text format. No key; loopback clients only unless
        GRAPHMEM_METRICS_LOOPBACK_ONLY=false."""
        client = request.client.host if request.client else None
        if settings.metrics_loopback_only and not is_loopback(client):
            return problem(403, "forbidden", "/metrics is served to loopback clients only "
                           "(GRAPHMEM_METRICS_LOOPBACK_ONLY=false opens it)")
        body = generate_latest(REGISTRY) + generate_latest(jobs)
        return Response(body, media_type=CONTENT_TYPE_LATEST)
