"""JSON lines of messages (one `MessageIn` object per line), or of another model (``parse``,
e.g. runs for procedural memory): checked in one streaming pass (`check`: the first bad line's
number and why), read in batches with line numbers in every error."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from graphmem.errors import InvalidInput
from graphmem.models import MessageIn

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class BadLine(ValueError):
    """Line ``line`` (from 1) of a file is not a message: ``reason``."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def parse(line: str) -> MessageIn:
    """One line as a message; ValueError naming what is wrong (the field, or the JSON error)."""
    return parse_as(MessageIn, line)


def parse_as(model: type[M], line: str) -> M:
    """One line as a ``model``; ValueError naming what is wrong (the field, or the JSON
    error)."""
    try:
        return model.model_validate(json.loads(line))
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc.msg} (column {exc.colno})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}: {first['msg']}" if where else first["msg"]) from None


def check(path: str | Path, parse: Callable[[str], object] = parse) -> int:
    """Validate every line without keeping any (a file of any size): BadLine at the first bad
    one (not UTF-8, not JSON, not a message: ``parse`` raised ValueError); else how many lines
    the file holds."""
    count = 0
    with Path(path).open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BadLine(number, f"not UTF-8 text (byte {exc.start + 1} of the line)"
                              ) from None
            if not line.strip():
                continue
            try:
                parse(line)
            except ValueError as exc:
                raise BadLine(number, str(exc)) from None
            count += 1
    return count


def read(path: str | Path, batch_size: int = 200) -> Iterator[list[MessageIn]]:
    return read_with(parse, path, batch_size)


def read_with(parse: Callable[[str], T], path: str | Path, batch_size: int = 200
              ) -> Iterator[list[T]]:
    """The lines as ``parse`` reads them, in batches; InvalidInput names a bad line."""
    batch: list[T] = []
    with Path(path).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                batch.append(parse(line))
            except ValueError as exc:
                raise InvalidInput(f"line {number}", str(exc)) from None
            if len(batch) >= batch_size:
                yield batch
                batch = []
    if batch:
        yield batch


def count_lines(path: str | Path) -> int:
    with Path(path).open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())
