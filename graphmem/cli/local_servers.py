"""`graphmem neo4j` and `graphmem llm`: the local Neo4j and the local LLM server."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from graphmem.cli.common import console, fail
from graphmem.config import NEO4J_VERSION, NEO4J_VERSION_2026, Settings
from graphmem.servers import neo4j_server

neo4j_app = typer.Typer(help=f"Run a local Neo4j Community from Maven Central (no Docker): "
                        f"{NEO4J_VERSION_2026} when a Java 21+ is found, else {NEO4J_VERSION}; a "
                        f"database keeps the version it was first started with "
                        f"(GRAPHMEM_NEO4J_VERSION pins one).")
llm_app = typer.Typer(help="Run a local LLM (llama.cpp's llama-server, Qwen2.5-Coder-1.5B).")


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
        raise fail(exc) from exc
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
        raise fail(exc) from exc
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
        raise fail(exc) from exc
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
        raise fail(exc) from exc
    typer.echo(local_server.export_lines(env))
