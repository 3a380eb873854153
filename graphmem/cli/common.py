"""What the command's modules share: the console on stderr, the tenant option and its check,
one-line failures, the progress bar, and one tenant's memory for a command."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from graphmem.access import Access
from graphmem.config import Settings
from graphmem.errors import GraphMemError
from graphmem.progress import progress

if TYPE_CHECKING:
    from graphmem.tenant_memory import TenantMemory

console = Console(stderr=True)

MAX_TENANT_CHARS = 200


def check_tenant(value: str) -> str:
    """Check a tenant name (1-200 characters, no control characters) and say on stderr which
    tenant a command acts as when it is not "default"."""
    if not 1 <= len(value) <= MAX_TENANT_CHARS or any(c < " " or c == "\x7f" for c in value):
        raise typer.BadParameter(f"a tenant is 1 to {MAX_TENANT_CHARS} characters, without "
                                 f"control characters; got {value[:40]!r}")
    if value != "default":
        console.print(f"tenant: {value}", highlight=False)
    return value


Tenant = Annotated[str, typer.Option(
    envvar="GRAPHMEM_TENANT", callback=check_tenant,
    help="Tenant to act as (the CLI is trusted: no API key); default: $GRAPHMEM_TENANT, else "
    "'default'")]
DemoTenant = Annotated[str, typer.Option(
    envvar="GRAPHMEM_TENANT", callback=check_tenant,
    help="Tenant the demo memory goes to; default: $GRAPHMEM_TENANT, else 'demo'")]


InProcessWorker = Annotated[bool, typer.Option(
    "--worker/--no-worker", envvar="GRAPHMEM_WORKER_IN_PROCESS",
    help="Also run the background jobs (formation) in this process, in a thread stopped on "
    "shutdown; or set GRAPHMEM_WORKER_IN_PROCESS")]


CALLER = "cli"
"""Who the command line is in the audit records (`TenantMemory.caller`)."""

Owners = Annotated[list[str] | None, typer.Option(
    "--owner", help="Limit to this owner's memory (repeat for more); default every owner of "
    "the tenant")]
ReadOnly = Annotated[bool, typer.Option(
    "--read-only", help="Searches, context, reads and exports only; no writes, no forgetting")]


def access_of(tenant: str, owners: list[str] | None, read_only: bool,
              rate_limit: float | None = None) -> Access:
    """What ``--owner`` / ``--read-only`` grant; a bad owner name is a usage error."""
    try:
        return Access(tenant=tenant, owners=frozenset(owners) if owners else None,
                      read_only=read_only, rate_limit=rate_limit)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).splitlines()[-1], param_hint="--owner") from None


def fail(exc: Exception) -> typer.Exit:
    console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)  # [...] is text
    return typer.Exit(code=1)


def progress_bar() -> Progress:
    """A progress bar on stderr; silent when stderr is not a terminal."""
    return progress(console)


@contextmanager
def tenant_memory(tenant: str) -> Iterator[TenantMemory]:
    """One tenant's memory for a command that needs no schema step (the model loads only if the
    command embeds); a GraphMemError ends the command with one line."""
    from graphmem.service import Memory

    try:
        mem = Memory.open(Settings(), apply_schema=False, lazy_model=True)
        try:
            mem.ping()  # Neo4j down: one line now, not after the query retries
            yield mem.for_tenant(tenant, caller=CALLER)
        finally:
            mem.close()
    except GraphMemError as exc:
        raise fail(exc) from exc
