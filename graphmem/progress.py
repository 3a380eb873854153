"""Progress bars for long commands (ingest, re-embedding, formation catch-up, benchmarks): rich,
on stderr, shown only when stderr is a terminal (silent in logs, pipes and tests)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

_console = Console(stderr=True)
T = TypeVar("T")


def progress(console: Console | None = None) -> Progress:
    """A progress display on stderr; disabled when stderr is not a terminal."""
    console = console or _console
    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    return Progress(*columns, console=console, disable=not console.is_terminal)


@contextmanager
def bar(description: str, total: int | None) -> Iterator[Callable[..., None]]:
    """One bar; yields ``advance(n=1)``, which raises the total when work outgrows it (jobs
    that enqueue more jobs). Thread-safe."""
    lock, done = threading.Lock(), [0]
    with progress() as shown:
        task = shown.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            with lock:
                done[0] += n
                grown = None if total is None else max(total, done[0])
                shown.update(task, completed=done[0], total=grown)

        yield advance


def track(items: Sequence[T], description: str) -> Iterator[T]:
    """``items``, one by one, with a bar over them (closed when the loop ends or breaks)."""
    with bar(description, len(items)) as advance:
        for item in items:
            yield item
            advance()
