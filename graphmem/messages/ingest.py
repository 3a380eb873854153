"""From validated input to rows the store writes: ids, content hashes, retrieval units (sentences,
or passages for long texts) and the per-batch work budget. Pure, except `Ingestor`, which embeds
and hands one batch to the store."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from graphmem import metrics
from graphmem.config import EmbeddingUnit, Settings
from graphmem.embeddings import Embedder, token_counts
from graphmem.entities.extract import message_mentions as mention_rows
from graphmem.errors import Conflict, InvalidInput, TooLarge
from graphmem.messages import metadata, temporal
from graphmem.models import IngestReport, MessageIn
from graphmem.store.tenant import TenantStore

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
MAX_UNIT_WORDS = 80
# Words per passage of a long text: 160 words of conversational English (LoCoMo) make 212 word
# pieces at the median, 235 at most, with the speaker prefix: inside the model's 256.
PASSAGE_WORDS = 160


def split_sentences(text: str, max_words: int = MAX_UNIT_WORDS) -> list[str]:
    """Sentences of a message; a sentence longer than ``max_words`` is cut into pieces so every
    unit fits the embedder's window. Always at least one unit for non-blank text."""
    units: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        words = sentence.split()
        for i in range(0, len(words), max_words):
            units.append(" ".join(words[i : i + max_words]))
    return units or [text.strip()]


def split_units(text: str, max_units: int, passage_words: int = PASSAGE_WORDS,
                max_words: int = MAX_UNIT_WORDS,
                unit: EmbeddingUnit = "sentence") -> list[str]:
    """The retrieval units of a message, at most ``max_units`` of them. A text whose sentences
    fit the cap is split into sentences (`split_sentences`, unchanged for chat turns); a longer
    one into passages: runs of consecutive sentences of up to ``passage_words`` words. If even
    those are more than the cap, passages grow so that the cap holds (the model then embeds the
    start of each; the whole text stays in the fulltext index). Units keep the text's words in
    order, none lost. With ``unit="passage"`` every text is cut into passages (a chat turn is
    one unit)."""
    sentences = split_sentences(text, max_words)
    if len(sentences) <= max_units and unit == "sentence":
        return sentences
    passages = _pack(sentences, max(passage_words, max_words))
    if len(passages) <= max_units:
        return passages
    if max_units <= 1:
        return [" ".join(sentences)]
    # A closed passage holds at least `limit - max_words + 1` words (the next sentence, at most
    # max_words long, did not fit), so at most max_units - 1 passages close, plus the last one.
    words = sum(len(s.split()) for s in sentences)
    return _pack(sentences, -(-words // (max_units - 1)) + max_words - 1)


def _pack(sentences: list[str], limit: int) -> list[str]:
    """Greedy runs of consecutive sentences of at most ``limit`` words (each sentence fits)."""
    passages: list[str] = []
    run: list[str] = []
    size = 0
    for sentence in sentences:
        n = len(sentence.split())
        if run and size + n > limit:
            passages.append(" ".join(run))
            run, size = [], 0
        run.append(sentence)
        size += n
    if run:
        passages.append(" ".join(run))
    return passages


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
    units: dict[str, list[str]]  # message id -> the texts of its retrieval units, in order


def check_budget(batch: list[MessageIn], settings: Settings) -> None:
    """The limits of one batch that need no splitting: messages, characters per text and in
    all. Raises InvalidInput (422) or TooLarge (413) before any work is spent on the batch."""
    if len(batch) > settings.max_batch:
        raise InvalidInput(
            "messages", f"{len(batch)} messages in one batch; at most {settings.max_batch}"
        )
    for i, m in enumerate(batch):
        if len(m.text) > settings.max_text_chars:
            raise InvalidInput(
                f"messages[{i}].text",
                f"{len(m.text)} characters; at most {settings.max_text_chars} per message",
            )
    chars = sum(len(m.text) for m in batch)
    if chars > settings.max_batch_chars:
        raise TooLarge("messages", f"{chars} characters of text in one batch; at most "
                       f"{settings.max_batch_chars} (max_batch_chars): send fewer per request",
                       limit=settings.max_batch_chars, actual=chars)


def check_tokens(counts: list[int], settings: Settings) -> None:
    """The embedding budget of one batch: the word pieces the model would read for its new
    units (each counted up to the model's window). Raises TooLarge (413) before any embedding."""
    total = sum(counts)
    if total > settings.max_batch_tokens:
        raise TooLarge("messages", f"{total} word pieces to embed in one batch; at most "
                       f"{settings.max_batch_tokens} (max_batch_tokens): send fewer or shorter "
                       "messages per request", limit=settings.max_batch_tokens, actual=total)


def prepare(batch: list[MessageIn], settings: Settings) -> Prepared:
    """Check limits and the batch's budget, give every message an id and its retrieval units,
    drop exact repeats inside the batch. Nothing is embedded or written for a refused batch."""
    check_budget(batch, settings)
    ids = [m.id or derived_id(m) for m in batch]
    units: dict[str, list[str]] = {}
    for id_, m in zip(ids, batch, strict=True):
        if id_ not in units:  # a repeat inside the batch is stored, and embedded, once
            units[id_] = split_units(m.text, settings.max_units_per_message,
                                     unit=settings.embedding_unit)
    total = sum(len(u) for u in units.values())
    if total > settings.max_batch_units:
        raise TooLarge("messages", f"{total} retrieval units (sentences or passages) in one "
                       f"batch; at most {settings.max_batch_units} (max_batch_units): send fewer "
                       "messages per request", limit=settings.max_batch_units, actual=total)
    rows: dict[str, dict[str, Any]] = {}
    for i, (id_, m) in enumerate(zip(ids, batch, strict=True)):
        row: dict[str, Any] = {
            "id": id_, "owner": m.owner, "session_id": m.session_id, "speaker": m.speaker,
            "role": m.role, "text": m.text, "search_text": f"{m.speaker}: {m.text}",
            "timestamp": m.timestamp, "metadata_json": json.dumps(m.metadata, sort_keys=True),
            "metadata_pairs": metadata.pairs(m.metadata), "content_hash": content_hash(m),
            "index": i,
            **_event_dates(m),
        }
        if id_ in rows and rows[id_]["content_hash"] != row["content_hash"]:
            raise Conflict(f"messages[{i}].id: {id_!r} appears twice with different content",
                           field=f"messages[{i}].id")
        rows.setdefault(id_, row)
    sessions: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows.values():
        key = (row["owner"], row["session_id"])
        s = sessions.setdefault(key, {"owner": key[0], "session_id": key[1], "ids": set(),
                                      "min_ts": row["timestamp"], "max_ts": row["timestamp"]})
        s["ids"].add(row["id"])
        s["min_ts"] = min(s["min_ts"], row["timestamp"])
        s["max_ts"] = max(s["max_ts"], row["timestamp"])
    # sessions in (owner, session_id) order: a batch spanning sessions locks them in the order
    # every other batch does (`link_sessions.cypher`), so concurrent batches never deadlock
    return Prepared(list(rows.values()), [sessions[k] for k in sorted(sessions)], units)


@dataclass(frozen=True)
class Embedded:
    """A prepared batch with the retrieval units of its new messages, embedded."""

    batch: list[MessageIn]
    prepared: Prepared
    units: list[dict[str, Any]]
    fresh: list[dict[str, Any]] = field(default_factory=list)
    """The rows of the messages not stored yet (whose mentions `write` extracts: in bulk ingest
    that runs on the writer's thread, beside the next batch's embedding)."""


class Ingestor:
    """Embeds the retrieval units of new messages and writes a batch in one transaction. Every
    batch, bulk ones included, passes `prepare`'s budget before anything is embedded."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        self._settings = settings
        self._embedder = embedder

    def ingest_batch(self, store: TenantStore, batch: list[MessageIn],
                     by: str | None = None) -> IngestReport:
        """Store one batch; ``by``: who sends it (kept as each new message's ``recorded_by``)."""
        return self.write(store, self.embed(store, batch), by)

    def ingest_many(
        self, store: TenantStore, batches: Iterable[list[MessageIn]], by: str | None = None
    ) -> Iterator[IngestReport]:
        """Bulk ingest: while one batch commits in Neo4j, the next one is embedded. Each batch
        is still its own transaction; reports come in order, each once its batch committed."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-write") as writer:
            pending: Future[IngestReport] | None = None
            for batch in batches:
                embedded = self.embed(store, batch)
                if pending is not None:
                    yield pending.result()
                pending = writer.submit(self.write, store, embedded, by)
            if pending is not None:
                yield pending.result()

    def embed(self, store: TenantStore, batch: list[MessageIn]) -> Embedded:
        prepared = prepare(batch, self._settings)
        known = store.existing_ids([r["id"] for r in prepared.messages])
        units: list[dict[str, Any]] = []
        for row in prepared.messages:
            if row["id"] in known:
                continue
            for idx, text in enumerate(prepared.units[row["id"]]):
                units.append({"id": f"{row['id']}#{idx}", "message_id": row["id"], "idx": idx,
                              "text": text, "embed": f"{row['speaker']}: {text}"})
        texts = [u.pop("embed") for u in units]
        check_tokens(token_counts(self._embedder, texts), self._settings)
        vectors = self._embedder.embed(texts)
        metrics.INGEST_UNITS.inc(len(units))
        for unit, vector in zip(units, vectors, strict=True):
            unit["embedding"] = vector
        fresh = [r for r in prepared.messages if r["id"] not in known]
        return Embedded(batch, prepared, units, fresh)

    def write(self, store: TenantStore, embedded: Embedded,
              by: str | None = None) -> IngestReport:
        written = store.write_messages(
            embedded.prepared.messages, embedded.units, embedded.prepared.sessions,
            batch=uuid.uuid4().hex, now=datetime.now(UTC), mentions=mention_rows(embedded.fresh),
            by=by,
        )
        created = sum(1 for w in written if w["created"])
        batch = embedded.batch
        return IngestReport(ids=[m.id or derived_id(m) for m in batch], created=created,
                            duplicates=len(batch) - created)
