"""The long-running commands: the HTTP API (`serve`), MCP, the job worker and the demo.

Every way of serving HTTP runs `graphmem.ops.http_server.run`, so its connection limits hold for
all of them."""

from __future__ import annotations

import os
import secrets
from contextlib import nullcontext
from typing import Annotated, Any

import typer

from graphmem.cli.common import (
    DemoTenant,
    InProcessWorker,
    Owners,
    ReadOnly,
    access_of,
    check_tenant,
    fail,
)
from graphmem.config import Settings, hash_api_key
from graphmem.errors import GraphMemError
from graphmem.progress import bar
from graphmem.servers import neo4j_server


def serve(
    host: Annotated[str | None, typer.Option(
        help="Address to listen on; default: $GRAPHMEM_HOST, else 127.0.0.1")] = None,
    port: Annotated[int | None, typer.Option(
        help="Port to listen on; default: $GRAPHMEM_PORT, else 8000")] = None,
    worker: InProcessWorker = False,
    tenant: Annotated[str | None, typer.Option(
        callback=lambda v: v if v is None else check_tenant(v),
        help="With --worker: only this tenant's jobs (default: every tenant's, as `graphmem "
        "worker`)")] = None,
    workers: Annotated[int, typer.Option(min=1, help="API processes (each loads the model and "
                                         "opens its own Neo4j connections; --worker jobs still "
                                         "run once, in the supervising process)")] = 1,
) -> None:
    """Run the HTTP API (uvicorn). With --worker also the background jobs in this process: the
    jobs of every tenant of the database, or with --tenant of that one only (the API serves
    every tenant its keys name either way)."""
    from graphmem.api.app import create_app
    from graphmem.ops import http_server

    if tenant is not None and not worker:
        raise typer.BadParameter("--tenant chooses whose jobs --worker runs: give --worker too",
                                 param_hint="--tenant")
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = Settings(**overrides)  # type: ignore[arg-type]
    typer.echo(f"API docs: http://{settings.host}:{settings.port}/docs")
    if workers > 1:
        _serve_processes(settings, workers, worker, tenant)
        return
    if not worker:
        http_server.run(create_app(settings), settings)
        return
    from graphmem.service import Memory

    mem = Memory.open(settings, apply_schema=False)
    try:
        _serve_with_worker(settings, mem, create_app(settings, mem), tenant)
    finally:
        mem.close()


def _serve_processes(settings: Settings, workers: int, worker: bool,
                     tenant: str | None = None) -> None:
    """uvicorn's supervisor with ``workers`` API processes, each building its app and Memory
    from the environment (`graphmem.api.app:app_from_environment`); with ``worker`` the
    background jobs (of ``tenant`` only, when given) run once, in this supervising process.
    SIGINT/SIGTERM stop the processes, then the jobs (running jobs finish first)."""
    from graphmem.ops import http_server

    os.environ["GRAPHMEM_HOST"], os.environ["GRAPHMEM_PORT"] = settings.host, str(settings.port)

    def run() -> None:
        http_server.run("graphmem.api.app:app_from_environment", settings, workers=workers)

    if not worker:
        run()
        return
    from graphmem.ops.worker import BackgroundWorkers
    from graphmem.service import Memory

    mem = Memory.open(settings, apply_schema=False)
    try:
        jobs = BackgroundWorkers(mem, tenant=tenant).start()
        typer.echo(f"worker: running in the supervising process (formation of episodes, "
                   f"windows, skills; {_whose(tenant)})")
        try:
            run()
        finally:
            jobs.stop()
    finally:
        mem.close()


def _whose(tenant: str | None) -> str:
    return "every tenant's jobs" if tenant is None else f"tenant {tenant!r}'s jobs only"


def _serve_with_worker(settings: Settings, mem: Any, asgi: Any,
                       tenant: str | None = None) -> None:
    """uvicorn with formation workers in a background thread (``tenant``'s jobs only, when
    given), stopped (running jobs finish first) when the server shuts down."""
    from graphmem.ops import http_server
    from graphmem.ops.worker import BackgroundWorkers

    workers = BackgroundWorkers(mem, tenant=tenant).start()
    typer.echo(f"worker: running in this process (formation of episodes, windows, skills; "
               f"{_whose(tenant)})")
    try:
        http_server.run(asgi, settings)
    finally:
        workers.stop()


def mcp(
    tenant: Annotated[str, typer.Option(envvar="GRAPHMEM_MCP_TENANT", help="Tenant the stdio "
                                        "server acts as (the client is trusted: no API key)")]
    = "default",
    transport: Annotated[str, typer.Option(help="stdio | http")] = "stdio",
    host: Annotated[str | None, typer.Option(
        help="With --transport http: address to listen on; default: $GRAPHMEM_HOST, else "
        "127.0.0.1")] = None,
    port: Annotated[int | None, typer.Option(
        help="With --transport http: port to listen on; default: $GRAPHMEM_PORT, else "
        "8000")] = None,
    owner: Owners = None,
    read_only: ReadOnly = False,
    tools: Annotated[str | None, typer.Option(
        help="core (six tools that cover a turn: the default) or all (every tool)")] = None,
) -> None:
    """Serve MCP (Model Context Protocol) for Claude Desktop, Cursor and other agents: on
    stdin/stdout for one tenant (--owner, --read-only limit the agent; a read-only server
    offers only the tools that read), or with --transport http at /mcp of the HTTP API (API
    keys, each with what it grants)."""
    if tools is not None:
        if tools not in ("core", "all"):
            raise typer.BadParameter(f"core or all, not {tools!r}", param_hint="--tools")
        os.environ["GRAPHMEM_MCP_TOOLS"] = tools  # read by the Settings of every server process
    if transport == "http":
        if owner or read_only:
            raise typer.BadParameter("over http each API key says what it grants (graphmem "
                                     "key --owner, --read-only)", param_hint="--owner")
        serve(host, port)
        return
    if transport != "stdio":
        raise fail(ValueError(f"--transport must be stdio or http, not {transport!r}"))
    from graphmem.mcp.stdio import run_stdio

    access = access_of(tenant, owner, read_only)
    try:
        run_stdio(Settings(), access)
    except GraphMemError as exc:
        raise fail(exc) from exc


def worker(
    concurrency: Annotated[int, typer.Option(min=1, help="Worker threads in this process "
                                             "(start more processes for more)")] = 1,
    once: Annotated[bool, typer.Option(help="Exit once no job is claimable (drain)")] = False,
    tenant: Annotated[str | None, typer.Option(
        callback=lambda v: v if v is None else check_tenant(v),
        help="Only this tenant's jobs (default: every tenant's)")] = None,
) -> None:
    """Run background jobs (formation) until stopped (Ctrl-C or SIGTERM: running jobs finish
    first). A job left by a killed worker is claimed again once its lease expires."""
    import signal
    import threading

    from graphmem.api.observability import configure_logging
    from graphmem.ops import worker as jobs_worker
    from graphmem.service import Memory

    settings = Settings()
    configure_logging(settings)  # GRAPHMEM_LOG_FORMAT / GRAPHMEM_LOG_LEVEL, as the API's
    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        mem = Memory.open(settings)
        try:
            waiting = 0
            if once:  # catching up: a bar over the jobs waiting now (more may come)
                waiting = (mem.jobs.counts(tenant) if tenant is not None
                           else mem.job_counts_all(["pending"], 10**9)).get("pending", 0)
            with bar("formation jobs", waiting) if once else nullcontext() as advance:
                ran = jobs_worker.run_workers(mem, jobs_worker.DEFAULT_HANDLERS, concurrency,
                                              stop, drain=once, tenant=tenant, on_job=advance)
        finally:
            mem.close()
    except GraphMemError as exc:
        raise fail(exc) from exc
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    typer.echo(f"{ran} jobs run")


def demo(
    tenant: DemoTenant = "demo",
    worker: InProcessWorker = True,
    browser_setup: Annotated[bool, typer.Option(
        help="After connecting, Neo4j Browser applies the graphmem style and opens the guide "
        "to the audit queries on the demo data (both served by this API)")] = True,
) -> None:
    """Start Neo4j, load the small demo memory, and serve the API (what `make run` does)."""
    from graphmem import demo as demo_data
    from graphmem.api.app import create_app
    from graphmem.api.browser import post_connect_cmd
    from graphmem.ops import http_server
    from graphmem.service import Memory

    settings = Settings()
    try:
        connect_cmd = post_connect_cmd(settings, tenant) if browser_setup else None
        st = neo4j_server.start(settings, connect_cmd)
        mem = Memory.open(settings)
        demo_data.load(mem, tenant)
    except (GraphMemError, neo4j_server.Neo4jServerError) as exc:
        raise fail(exc) from exc
    key = "gm_demo_" + secrets.token_urlsafe(12)
    keys = {**settings.api_keys, hash_api_key(key): tenant}  # the environment's keys stay valid
    settings = settings.model_copy(update={"api_keys": keys})
    typer.echo(
        f"\nAPI docs:      http://{settings.host}:{settings.port}/docs\n"
        f"Neo4j Browser: {st.browser_url}  (user neo4j, password in {settings.password_file})\n"
        + (f"  after connecting it applies the graphmem style and opens the guide "
           f"({connect_cmd.rsplit(' ', 1)[-1]})\n" if connect_cmd else "")
        + f"API key for tenant {tenant!r}: {key}\n"
        f"Try: curl -s -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' "
        f"-d '{{\"query\": \"rollback requirement\", \"owner\": \"alice\"}}' "
        f"http://{settings.host}:{settings.port}/v1/search\n"
        + ("" if worker else "worker: off (--no-worker): run `graphmem worker` to form "
           "episodes\n")
    )
    if worker:
        _serve_with_worker(settings, mem, create_app(settings, mem))
    else:
        http_server.run(create_app(settings, mem), settings)
