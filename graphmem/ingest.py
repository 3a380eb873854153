"""From validated input to rows the store writes: ids, content hashes, sentence units. Pure,
except `Ingestor.ingest`, which embeds and hands one batch to the store."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from graphmem import temporal
from graphmem.config import Settings
from graphmem.embeddings import Embedder
from graphmem.errors import Conflict, InvalidInput
from graphmem.models import IngestReport, MessageIn
from graphmem.store import TenantStore

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
MAX_UNIT_WORDS = 80


def split_sentences(text: str, max_words: int = MAX_UNIT_WORDS) -> list[str]:
    """Sentences of a message; a sentence longer than ``max_words`` is cut into pieces so every
    unit fits the embedder's window. Always at least one unit for non-blank text."""
    units: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        words = sentence.split()
        for i in range(0, len(words), max_words):
            units.append(" ".join(words[i : i + max_words]))
    return units or [text.strip()]


def derived_id(m: MessageIn) -> str:
    """A deterministic id for a message sent without one: a retry is still stored once."""
    key = "\x1f".join([m.owner, m.session_id, m.speaker, m.timestamp.isoformat(), m.text])
    return "m-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def content_hash(m: MessageIn) -> str:
    body = [m.owner, m.session_id, m.speaker, m.role, m.text, m.timestamp.isoformat(),
            json.dumps(m.metadata, sort_keys=True)]
    return hashlib.sha256(json.dumps(body).encode("utf-8")).hexdigest()


def _event_dates(m: MessageIn) -> dict[str, list[date]]:
    """The days the message's time expressions refer to, resolved against its timestamp
    ("yesterday" said on 2023-05-08 -> 2023-05-07): event time, kept apart from when it was said."""
    spans = temporal.event_dates(m.text, m.timestamp)
    return {"event_starts": [a for a, _ in spans], "event_ends": [b for _, b in spans]}


@dataclass(frozen=True)
class Prepared:
    messages: list[dict[str, Any]]
    sessions: list[dict[str, Any]]


def prepare(batch: list[MessageIn], settings: Settings) -> Prepared:
    """Check limits, give every message an id, drop exact repeats inside the batch."""
    if len(batch) > settings.max_batch:
        raise InvalidInput(
            "messages", f"{len(batch)} messages in one batch; at most {settings.max_batch}"
        )
    rows: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(batch):
        if len(m.text) > settings.max_text_chars:
            raise InvalidInput(
                f"messages[{i}].text",
                f"{len(m.text)} characters; at most {settings.max_text_chars} per message",
            )
        id_ = m.id or derived_id(m)
        row: dict[str, Any] = {
            "id": id_, "owner": m.owner, "session_id": m.session_id, "speaker": m.speaker,
            "role": m.role, "text": m.text, "search_text": f"{m.speaker}: {m.text}",
            "timestamp": m.timestamp, "metadata_json": json.dumps(m.metadata, sort_keys=True),
            "content_hash": content_hash(m), "index": i,
            **_event_dates(m),
        }
        if id_ in rows and rows[id_]["content_hash"] != row["content_hash"]:
            raise Conflict(f"messages[{i}].id: {id_!r} appears twice with different content")
        rows.setdefault(id_, row)
    sessions: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows.values():
        key = (row["owner"], row["session_id"])
        s = sessions.setdefault(key, {"owner": key[0], "session_id": key[1], "ids": set(),
                                      "min_ts": row["timestamp"], "max_ts": row["timestamp"]})
        s["ids"].add(row["id"])
        s["min_ts"] = min(s["min_ts"], row["timestamp"])
        s["max_ts"] = max(s["max_ts"], row["timestamp"])
    return Prepared(list(rows.values()), list(sessions.values()))


@dataclass(frozen=True)
class Embedded:
    """A prepared batch with the sentence units of its new messages, embedded."""

    batch: list[MessageIn]
    prepared: Prepared
    units: list[dict[str, Any]]


class Ingestor:
    """Embeds the sentence units of new messages and writes a batch in one transaction."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        self._settings = settings
        self._embedder = embedder

    def ingest(self, store: TenantStore, batch: list[MessageIn]) -> IngestReport:
        return self.write(store, self.embed(store, batch))

    def ingest_many(
        self, store: TenantStore, batches: Iterable[list[MessageIn]]
    ) -> Iterator[IngestReport]:
        """Bulk ingest: while one batch commits in Neo4j, the next one is embedded. Each batch
        is still its own transaction; reports come in order, each once its batch committed."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-write") as writer:
            pending: Future[IngestReport] | None = None
            for batch in batches:
                embedded = self.embed(store, batch)
                if pending is not None:
                    yield pending.result()
                pending = writer.submit(self.write, store, embedded)
            if pending is not None:
                yield pending.result()

    def embed(self, store: TenantStore, batch: list[MessageIn]) -> Embedded:
        prepared = prepare(batch, self._settings)
        known = store.existing_ids([r["id"] for r in prepared.messages])
        units: list[dict[str, Any]] = []
        for row in prepared.messages:
            if row["id"] in known:
                continue
            for idx, sentence in enumerate(split_sentences(row["text"])):
                units.append({"id": f"{row['id']}#{idx}", "message_id": row["id"], "idx": idx,
                              "text": sentence, "embed": f"{row['speaker']}: {sentence}"})
        vectors = self._embedder.embed([u.pop("embed") for u in units])
        for unit, vector in zip(units, vectors, strict=True):
            unit["embedding"] = vector
        return Embedded(batch, prepared, units)

    def write(self, store: TenantStore, embedded: Embedded) -> IngestReport:
        written = store.write_messages(
            embedded.prepared.messages, embedded.units, embedded.prepared.sessions,
            batch=uuid.uuid4().hex, now=datetime.now(UTC),
        )
        created = sum(1 for w in written if w["created"])
        batch = embedded.batch
        return IngestReport(ids=[m.id or derived_id(m) for m in batch], created=created,
                            duplicates=len(batch) - created)
