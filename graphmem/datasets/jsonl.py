"""JSON lines of messages (one `MessageIn` object per line), read in batches with line numbers in
every error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from graphmem.errors import InvalidInput
from graphmem.models import MessageIn


def read(path: str | Path, batch_size: int = 200) -> Iterator[list[MessageIn]]:
    batch: list[MessageIn] = []
    with Path(path).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                batch.append(MessageIn.model_validate(json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"line {number}", f"malformed JSON: {exc.msg}") from None
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise InvalidInput(f"line {number}: {where}", first["msg"]) from None
            if len(batch) >= batch_size:
                yield batch
                batch = []
    if batch:
        yield batch


def count_lines(path: str | Path) -> int:
    with Path(path).open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())
