"""Small builders shared by the integration tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def owner() -> str:
    return f"owner-{uuid.uuid4().hex[:10]}"


def msg(
    i: int, owner: str, session: str = "s1", text: str | None = None, **kw: Any
) -> dict[str, Any]:
    """A message dict as an agent would POST it; turn i is i*30 s after T0."""
    body = {
        "id": kw.pop("id", f"{owner}-{session}-{i}"),
        "owner": owner,
        "session_id": session,
        "speaker": kw.pop("speaker", "alice" if i % 2 == 0 else "bob"),
        "text": text if text is not None else f"message number {i} of {session}",
        "timestamp": (T0 + timedelta(seconds=30 * i)).isoformat(),
    }
    body.update(kw)
    return body
