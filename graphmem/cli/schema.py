"""`graphmem schema`: constraints and indexes, and moving stored vectors to another model."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from graphmem.cli.common import fail, progress_bar
from graphmem.config import Settings
from graphmem.errors import GraphMemError

schema_app = typer.Typer(help="Constraints and indexes.")


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
        raise fail(exc) from exc
    typer.echo("schema applied; every index ONLINE")


@schema_app.command("reembed")
def schema_reembed(
    batch: Annotated[int, typer.Option(min=1, help="Nodes per transaction")] = 256,
) -> None:
    """Move the database to the configured embedding model: every stored vector is made again
    (resumable). Stop the API and the workers first."""
    from graphmem.embeddings import embedder_for
    from graphmem.ops.reembed import reembed
    from graphmem.store import Store

    settings = Settings()
    try:
        embedder = embedder_for(settings)
        store = Store(settings)
        try:
            with progress_bar() as shown:
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
        raise fail(exc) from exc
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
        raise fail(exc) from exc
    typer.echo(f"{done} messages given their {encoder.name} word pieces")
