"""The `graphmem` command: a thin layer over the library (sqlite-utils style)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from graphmem import neo4j_server
from graphmem.config import Settings, hash_api_key
from graphmem.errors import GraphMemError
from graphmem.models import MessageIn, SearchRequest

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

Tenant = Annotated[str, typer.Option(help="Tenant to act as (the CLI is trusted: no API key)")]


def _fail(exc: Exception) -> typer.Exit:
    console.print(f"[red]error:[/red] {exc}")
    return typer.Exit(code=1)


# --- neo4j ------------------------------------------------------------------------------------
@neo4j_app.command("start")
def neo4j_start(
    browser_setup: Annotated[bool, typer.Option(
        help="After connecting, Neo4j Browser applies the graphmem style and opens the guide "
        "(both served by the API, `graphmem serve`, on this machine)")] = True,
) -> None:
    """Assemble (first time only), configure and start Neo4j; wait until Bolt answers."""
    from api.browser import post_connect_cmd

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
    typer.echo(json.dumps({k: str(v) for k, v in st.__dict__.items()}, indent=2))
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
    from graphmem.service import Memory

    try:
        Memory.open(Settings()).close()
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
            report = reembed(store, embedder, batch,
                             lambda label, n: typer.echo(f"  {label}: {n}", err=True))
        finally:
            store.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc
    typer.echo(f"re-embedded with {report.model} ({report.dimensions} dimensions; was "
               f"{report.previous}): " + ", ".join(f"{k} {v}" for k, v in report.nodes.items())
               + ("; vector indexes rebuilt" if report.indexes_rebuilt else ""))


# --- keys -------------------------------------------------------------------------------------
@app.command("key")
def new_key(tenant: str) -> None:
    """Make an API key for TENANT; prints the key (give it to the client) and the settings line
    (keep it on the server: only the hash is stored)."""
    key = "gm_" + secrets.token_urlsafe(24)
    typer.echo(f"key:      {key}")
    typer.echo(f"settings: GRAPHMEM_API_KEYS='{json.dumps({hash_api_key(key): tenant})}'")


# --- ingest / search --------------------------------------------------------------------------
def _batches(path: Path, fmt: str, batch: int) -> tuple[int, Iterable[list[MessageIn]]]:
    if fmt == "locomo":
        from graphmem.datasets import locomo

        messages = [m for c in locomo.load(path) for m in c.messages]
        return len(messages), (messages[i : i + batch] for i in range(0, len(messages), batch))
    from graphmem.datasets import jsonl

    return jsonl.count_lines(path), jsonl.read(path, batch)


@app.command("ingest")
def ingest(
    file: Path,
    tenant: Tenant = "default",
    format: Annotated[str, typer.Option(help="jsonl | locomo")] = "jsonl",
    batch: int = 200,
) -> None:
    """Store the messages of FILE (JSON lines of messages, or a LoCoMo file)."""
    from graphmem.service import Memory

    if format not in ("jsonl", "locomo"):
        raise _fail(ValueError(f"--format must be jsonl or locomo, not {format!r}"))
    try:
        mem = Memory.open(Settings())
        total, batches = _batches(file, format, batch)
        created = 0
        columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn())
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("ingesting", total=total)
            for report in mem.ingest_many(tenant, batches):
                created += report.created
                progress.advance(task, len(report.ids))
        mem.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc
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
        mem = Memory.open(Settings())
        req = SearchRequest.model_validate({"query": query, "owner": owner, "k": k,
                                            "method": method})
        result = mem.search(tenant, req)
        mem.close()
    except GraphMemError as exc:
        raise _fail(exc) from exc
    typer.echo(result.model_dump_json(indent=2) if as_json else result.context)


# --- serve ------------------------------------------------------------------------------------
@app.command("serve")
def serve(
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Run the HTTP API (uvicorn)."""
    import uvicorn

    from api.app import create_app

    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = Settings(**overrides)  # type: ignore[arg-type]
    typer.echo(f"API docs: http://{settings.host}:{settings.port}/docs")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port)


# --- worker -----------------------------------------------------------------------------------
@app.command("worker")
def worker(
    concurrency: Annotated[int, typer.Option(min=1, help="Worker threads in this process "
                                             "(start more processes for more)")] = 1,
    once: Annotated[bool, typer.Option(help="Exit once no job is claimable (drain)")] = False,
) -> None:
    """Run background jobs (formation) until stopped (Ctrl-C or SIGTERM: running jobs finish
    first). A job left by a killed worker is claimed again once its lease expires."""
    import signal
    import threading

    from api.observability import configure_logging
    from graphmem import worker as jobs_worker
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
            ran = jobs_worker.run_workers(mem, jobs_worker.DEFAULT_HANDLERS, concurrency, stop,
                                          drain=once)
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
    tenant: Tenant = "demo",
    browser_setup: Annotated[bool, typer.Option(
        help="After connecting, Neo4j Browser applies the graphmem style and opens the guide "
        "to the audit queries on the demo data (both served by this API)")] = True,
) -> None:
    """Start Neo4j, load the small demo memory, and serve the API (what `make run` does)."""
    import uvicorn

    from api.app import create_app
    from api.browser import post_connect_cmd
    from graphmem import demo as demo_data
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
    settings = settings.model_copy(update={"api_keys": {hash_api_key(key): tenant}})
    typer.echo(
        f"\nAPI docs:      http://{settings.host}:{settings.port}/docs\n"
        f"Neo4j Browser: {st.browser_url}  (user neo4j, password in {settings.password_file})\n"
        + (f"  after connecting it applies the graphmem style and opens the guide "
           f"({connect_cmd.rsplit(' ', 1)[-1]})\n" if connect_cmd else "")
        + f"API key for tenant {tenant!r}: {key}\n"
        f"Try: curl -s -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' "
        f"-d '{{\"query\": \"rollback requirement\", \"owner\": \"alice\"}}' "
        f"http://{settings.host}:{settings.port}/v1/search\n"
    )
    uvicorn.run(create_app(settings, mem), host=settings.host, port=settings.port)


@bench_app.command("locomo")
def bench_locomo(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations")] = None,
    units: Annotated[bool, typer.Option("--units/--no-units", help="Run the unit study")] = True,
) -> None:
    """Evidence recall of fulltext / vector / rrf / rrf_expand at budgets 5-50, ingest
    throughput, search latency in-process and over HTTP. Cleans up what it wrote."""
    from graphmem.bench import locomo as bench

    try:
        bench.main(Settings(), data, json_out, limit, units=units)
    except GraphMemError as exc:
        raise _fail(exc) from exc


@bench_app.command("tau")
def bench_tau(
    data: Annotated[Path, typer.Option(help="tau-bench trajectories (a JSON list of runs)")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
) -> None:
    """Procedural memory: ingest runs/s, formation time, clustering ARI, skill retrieval
    (leave-one-task-out). Cleans up what it wrote."""
    from graphmem.bench import tau

    try:
        tau.run(Settings(), data, json_out)
    except GraphMemError as exc:
        raise _fail(exc) from exc


def main() -> None:
    app()


if __name__ == "__main__":
    main()
