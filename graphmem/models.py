"""Pure pydantic models of what goes in and comes out. No I/O here."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

Scalar = str | int | float | bool | None
Rule = Literal["vector", "fulltext", "neighbour", "episode", "time", "window", "session", "graph",
               "sparse"]
Method = Literal["fulltext", "vector", "rrf", "rrf_expand", "rrf_windows", "iterative", "graph"]
Units = Literal["messages", "observations", "both", "episodes", "chunks"]


def utc(ts: datetime) -> datetime:
    """The same instant in UTC. Naive datetimes are refused upstream (UtcDatetime)."""
    return ts.astimezone(UTC)


# --- time as callers send it ------------------------------------------------------------------

MIN_TIME = datetime(1, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9000, 1, 1, tzinfo=UTC)
"""Accepted instants are ``MIN_TIME <= t < MAX_TIME`` (in UTC). The upper end leaves room for
resolving "999 years from now" and the like without leaving the calendar."""
MAX_OFFSET = timedelta(hours=18)
"""The largest UTC offset accepted (ISO 8601 practice and Neo4j's limit)."""
MAX_SKIP = 100_000
"""The deepest page offset (``skip``) a listing accepts: paging work stays bounded."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?"
    r"(?P<offset>[Zz]|[+-]\d{2}:?[0-5]\d)?", re.ASCII)
_EXAMPLE = "e.g. 2023-05-08T13:56:00Z or 2023-05-08T15:56:00+02:00"


def utc_datetime(value: object) -> datetime:
    """The UTC instant of an ISO 8601 date-time string with an offset (``YYYY-MM-DDTHH:MM[:SS[.f]]``
    then ``Z`` or ``+HH:MM``), or of an aware datetime. ValueError for anything else: numbers,
    times without an offset (never guessed), offsets beyond +-18:00, instants outside
    [MIN_TIME, MAX_TIME)."""
    if isinstance(value, str):
        m = _DATETIME.fullmatch(value)
        if m is None and _DATE.fullmatch(value):
            raise ValueError(f"a date alone is not a date-time: add a time and an offset, "
                             f"{_EXAMPLE}")
        if m is None:
            raise ValueError(f"expected an ISO 8601 date-time with an offset, {_EXAMPLE}")
        if m["offset"] is None:
            raise ValueError(f"needs a timezone offset (Z or +HH:MM), {_EXAMPLE}; a time "
                             "without one is never guessed")
        try:
            value = datetime.fromisoformat(value.upper())
        except ValueError:
            raise ValueError(f"not a calendar date-time: {value!r}") from None
    elif not isinstance(value, datetime):
        raise ValueError(f"expected an ISO 8601 date-time string with an offset, {_EXAMPLE}")
    offset = value.utcoffset()
    if offset is None:
        raise ValueError(f"needs a timezone offset, {_EXAMPLE}; a time without one is never "
                         "guessed")
    if abs(offset) > MAX_OFFSET:
        raise ValueError("the offset must be within -18:00 and +18:00")
    try:
        out = value.astimezone(UTC)
    except OverflowError:  # before year 1 or after 9999 once in UTC
        out = None
    if out is None or not MIN_TIME <= out < MAX_TIME:
        raise ValueError("out of range: from 0001-01-01T00:00:00Z (inclusive) to "
                         "9000-01-01T00:00:00Z (exclusive)")
    return out


def iso_date(value: object) -> date:
    """A calendar day from an ISO 8601 ``YYYY-MM-DD`` string (or a date); ValueError else."""
    if isinstance(value, str):
        if _DATE.fullmatch(value) is None:
            raise ValueError("expected an ISO 8601 date YYYY-MM-DD, e.g. 2023-05-08")
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not a calendar date: {value!r}") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    raise ValueError("expected an ISO 8601 date YYYY-MM-DD, e.g. 2023-05-08")


def _finite(value: Scalar) -> Scalar:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number (JSON cannot carry NaN or infinity back)")
    return value


def _bounded_text(value: Scalar) -> Scalar:
    if isinstance(value, str) and len(value) > MAX_METADATA_TEXT:
        raise ValueError(f"{len(value)} characters; at most {MAX_METADATA_TEXT}")
    return value


MetaValue = Annotated[Scalar, AfterValidator(_finite), AfterValidator(_bounded_text)]
"""A metadata value a caller sends: a scalar, never NaN or an infinity, a text of at most
`MAX_METADATA_TEXT` characters."""
DATETIME_PATTERN = (
    r"^(?:[1-8][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-[0-9]{2}-[0-9]{2}[Tt ]"
    r"[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?"
    r"(?:[Zz]|[+-](?:0[0-9]|1[0-7]):?[0-5][0-9]|[+-]18:?00)$")
"""What `utc_datetime` reads, declared in the API's schema: an offset is required and lies
within +-18:00, the year within [0001, 9000)."""
UtcDatetime = Annotated[datetime, BeforeValidator(utc_datetime), WithJsonSchema(
    {"type": "string", "format": "date-time", "pattern": DATETIME_PATTERN},
    mode="validation")]
"""Every datetime a caller sends: ISO 8601 with an offset, in range, stored as UTC."""
IsoDate = Annotated[date, BeforeValidator(iso_date)]
"""Every date a caller sends: ISO 8601 ``YYYY-MM-DD``."""


NAME = r"^[^\x00-\x1f\x7f]+$"
"""Ids and names: no control characters (they would blur field boundaries in derived ids)."""

MAX_KEY_CHARS = 500
DocumentKey = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS, pattern=NAME)]
"""A document's key: the client's name for it, unique per owner, shared by its versions."""
MAX_CHUNK_HITS = 100
"""The most chunk hits one search returns."""
MAX_CHUNK_NEIGHBOURS = 3
"""Neighbouring chunks added around a chunk hit, each way, at most."""

MAX_FILTER_VALUES = 100
MAX_BATCH = 1000
"""Messages in one request: the wire bound, checked before any message is validated (the
``max_batch`` setting may lower it, not raise it)."""
MAX_METADATA_KEYS = 64
MAX_METADATA_TEXT = 10_000
OPERATORS = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "exists")
"""A filter value may be an object of these (every one given must hold): ``eq`` / ``ne`` a value,
``in`` / ``nin`` a list, ``gt`` / ``gte`` / ``lt`` / ``lte`` a number, ``exists`` a boolean."""


def _scalars(values: list[Any]) -> None:
    if not 1 <= len(values) <= MAX_FILTER_VALUES:
        raise ValueError(f"one value, or a list of 1 to {MAX_FILTER_VALUES} values")
    for v in values:
        if v is not None and not isinstance(v, str | int | float | bool):
            raise ValueError("a string, number, boolean or null, or a list of them")
        _finite(v)


def _operators(ops: dict[str, Any]) -> None:
    """An operator object: known operators, each with the value it takes."""
    unknown = sorted(set(ops) - set(OPERATORS))
    if not ops or unknown:
        raise ValueError(f"operators are {', '.join(OPERATORS)}; got {unknown or 'none'}")
    for op, v in ops.items():
        if op in ("eq", "ne"):
            _scalars([v])
        elif op in ("in", "nin"):
            if not isinstance(v, list):
                raise ValueError(f"{op} takes a list of values")
            _scalars(v)
        elif op == "exists":
            if not isinstance(v, bool):
                raise ValueError("exists takes true or false")
        elif isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError(f"{op} takes a finite number")
    for a, b in (("eq", "in"), ("gt", "gte"), ("lt", "lte")):
        if a in ops and b in ops:
            raise ValueError(f"give {a} or {b}, not both")


def _filter_value(value: Any) -> Any:
    """One accepted value, a list of 1-100 of them (each a scalar, a finite number), or an
    object of operators (`OPERATORS`)."""
    if isinstance(value, dict):
        _operators(value)
    else:
        _scalars(value if isinstance(value, list) else [value])
    return value


_SCALAR_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]}
_LIST_SCHEMA: dict[str, Any] = {"type": "array", "items": _SCALAR_SCHEMA, "minItems": 1,
                                "maxItems": MAX_FILTER_VALUES}
FilterValue = Annotated[
    Any, AfterValidator(_filter_value),
    WithJsonSchema({"anyOf": [*_SCALAR_SCHEMA["anyOf"], _LIST_SCHEMA, {
        "type": "object", "additionalProperties": False, "minProperties": 1,
        "properties": {"eq": _SCALAR_SCHEMA, "ne": _SCALAR_SCHEMA, "in": _LIST_SCHEMA,
                       "nin": _LIST_SCHEMA, "gt": {"type": "number"}, "gte": {"type": "number"},
                       "lt": {"type": "number"}, "lte": {"type": "number"},
                       "exists": {"type": "boolean"}}}]})]
MetadataFilter = Annotated[
    dict[Annotated[str, Field(min_length=1, max_length=200)], FilterValue],
    Field(min_length=1, max_length=16)]
"""Messages whose metadata holds, for every key, the value given, one of the values listed, or
what an object of operators asks (`graphmem.messages.metadata`)."""
METADATA_FILTER = ("Only messages whose metadata has, for every key, this value, one of the "
                   "values listed, or what an object of operators asks: {\"channel\": \"slack\", "
                   "\"priority\": [1, 2], \"score\": {\"gte\": 0.5}, \"spam\": {\"exists\": "
                   "false}} (eq, ne, in, nin, gt, gte, lt, lte on numbers, exists). Neighbours "
                   "brought by expansion must match too. Up to 16 keys, 100 values each; 1 and "
                   "1.0 are the same number, true is not 1")


def messages_only(value: Any, info: ValidationInfo, allowed: set[str], hint: str) -> Any:
    """A metadata filter with ``units`` other than messages is refused (only messages carry
    metadata)."""
    units = info.data.get("units")
    asked = set(units) if isinstance(units, list) else {units}
    if value and units is not None and not asked <= allowed:
        raise ValueError(f"filters messages only (episodes and facts carry no metadata): {hint}")
    return value


class MessageLike(Protocol):
    """What formation, extraction and rendering read of a message (`Message` and `Hit` fit)."""

    @property
    def id(self) -> str: ...
    @property
    def speaker(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def timestamp(self) -> datetime: ...


class _Strict(BaseModel):
    """A request body: no field it does not know, and no value of another JSON type coerced
    (``0`` is not ``false``, ``"5"`` not ``5``)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)


class MessageIn(_Strict):
    """One turn as an agent sends it."""

    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NAME,
        description="Client id; if absent, a deterministic id is derived from the content so a "
        "retried request is still stored once",
    )
    owner: str = Field(
        min_length=1, max_length=200, pattern=NAME, description="Whose memory this is"
    )
    session_id: str = Field(min_length=1, max_length=200, pattern=NAME)
    speaker: str = Field(min_length=1, max_length=200, pattern=NAME)
    role: Literal["user", "assistant", "system", "tool"] | None = None
    text: str = Field(min_length=1, description="Must not be empty or blank")
    timestamp: UtcDatetime = Field(
        description="ISO 8601 with an offset, e.g. 2023-05-08T13:56:00Z; stored in UTC"
    )
    metadata: dict[Annotated[str, Field(min_length=1, max_length=200)], MetaValue] = Field(
        default_factory=dict, max_length=MAX_METADATA_KEYS,
        description=f"Up to {MAX_METADATA_KEYS} keys, each a scalar value (texts up to "
        f"{MAX_METADATA_TEXT} characters)")


MessageList = Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_BATCH)]
"""A batch of messages: its length is checked before any of its items is validated."""


class MessageBatch(_Strict):
    messages: MessageList


class Message(BaseModel):
    """A stored message (ground truth, never rewritten)."""

    id: str
    owner: str
    session_id: str
    speaker: str
    role: str | None = None
    text: str
    timestamp: datetime
    recorded_at: datetime
    recorded_by: str | None = Field(
        default=None, description="Who stored it: the id of the API key that sent it, "
        "anonymous, cli, mcp-stdio; null from the library or for messages stored before "
        "callers were kept")
    metadata: dict[str, Scalar] = Field(default_factory=dict)


class SessionInfo(BaseModel):
    """One session (conversation) of an owner: how many messages, and the event times of its
    first and last."""

    owner: str
    session_id: str
    message_count: int
    first_at: datetime
    last_at: datetime


class OwnerInfo(BaseModel):
    """One owner of a tenant and what it has stored."""

    owner: str
    sessions: int
    messages: int
    last_message_at: datetime | None = Field(description="event time of its latest message")
    facts: int = Field(description="every version, history included")
    traces: int = Field(description="agent runs")


class IngestReport(BaseModel):
    ids: list[str]
    created: int
    duplicates: int


class Expand(_Strict):
    before: int = Field(default=1, ge=0, le=20)
    after: int = Field(default=2, ge=0, le=20)


class SearchRequest(_Strict):
    query: str = Field(min_length=1, max_length=4000)
    owner: str = Field(min_length=1, max_length=200, pattern=NAME)
    session_id: str | None = None
    time_from: UtcDatetime | None = Field(default=None, description="inclusive, event time")
    time_to: UtcDatetime | None = Field(default=None, description="exclusive, event time")
    k: int = Field(default=10, ge=1, le=200, description="How many hits to return; an expanding "
                   "method gives each its neighbouring turns in `window` (not counted as hits)")
    expand: Expand | None = Field(
        default=None, description="Window around each hit; default: the preset's (1 before, 2 "
        "after in the default preset)")
    method: Method = "rrf_expand"
    max_messages: int | None = Field(
        default=None, ge=1, le=1000, description="Instead of k: the number of messages "
        "returned, all as hits (no windows): the best by score after expansion, so a turn next "
        "to strong hits (rule `neighbour`) may come before a weaker hit"
    )
    order: Literal["relevance", "time"] = Field(
        default="relevance", description="The order of `hits`: best first, or in time (event "
        "time, then arrival). The rendered `context` is in time either way")
    preset: str | None = Field(default=None, description="Named retrieval preset")
    units: Units = Field(
        default="messages", description="What to recall: raw messages, observations, or both "
        "(ranked separately and interleaved, never score-compared); or episodes, each returned "
        "with all its source messages (they count against max_messages); or chunks: passages "
        "of the owner's documents, in `chunks`, each with its citation (k at most "
        f"{MAX_CHUNK_HITS}; method vector, fulltext, or rrf for any other; `expand` adds up to "
        f"{MAX_CHUNK_NEIGHBOURS} neighbouring chunks of the same section each way; the "
        "message-only fields session_id, time_from, time_to, max_messages and order=time are "
        "refused)")
    documents: list[DocumentKey] | None = Field(
        default=None, min_length=1, max_length=100, description="Units chunks: only the "
        "documents of these keys", examples=[["handbook/onboarding.md"]])
    topic: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=NAME, description="Units chunks: "
        "only the documents filed under this topic of the owner (an id from GET /v1/topics)")
    metadata: MetadataFilter | None = Field(default=None, description=METADATA_FILTER + ". "
                                            "With units chunks: the documents' metadata, each "
                                            "value matched exactly (no lists or operators)",
                                            examples=[{"channel": "slack"}])
    as_of: UtcDatetime | None = Field(
        default=None, description="The search as of this time (default: now): observations "
        "valid then, and no message, window or episode that happened after it (a message's "
        "timestamp; a window's or an episode's last turn); also the 'now' against which the "
        "query's own time expressions are resolved")
    time_hint: Literal["boost", "restrict", "off"] = Field(
        default="boost", description="When the query names a time ('in May 2023', 'last "
        "year'): boost the messages of that time (an extra ranked list in the fusion of rrf and "
        "rrf_expand), keep only "
        "them, or ignore it")
    trace: bool = Field(
        default=False, description="Method iterative: return the trace of its rounds (queries, "
        "candidates, decisions, reservations, timings) in the result's `trace`")

    @field_validator("documents", "topic")
    @classmethod
    def _chunks_only(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("units") not in (None, "chunks"):
            raise ValueError('filters documents only: search units "chunks"')
        return value

    @field_validator("metadata")
    @classmethod
    def _messages_only(cls, value: Any, info: ValidationInfo) -> Any:
        if value and info.data.get("units") == "chunks":
            if any(isinstance(v, list | dict) for v in value.values()):
                raise ValueError("with units chunks, each value is matched exactly against "
                                 "the documents' metadata: no lists or operators")
            return value
        return messages_only(value, info, {"messages"}, 'search units "messages" (or '
                             '"chunks" for documents)')


class Turn(BaseModel):
    """A message around a hit, returned as its context."""

    id: str
    text: str
    speaker: str
    timestamp: datetime
    session_id: str
    metadata: dict[str, Scalar] = Field(default_factory=dict, description="As it was sent")


class Hit(BaseModel):
    id: str
    text: str
    speaker: str
    timestamp: datetime
    session_id: str
    owner: str
    score: float = Field(description="Its score: fused (re-ranked by the learned model where "
                         "one applies), plus what it earns beside other hits")
    rules: list[Rule]
    nucleus: bool = Field(description="Found by the recall lists itself; false: a neighbouring "
                          "turn taken under max_messages (rule `neighbour`)")
    metadata: dict[str, Scalar] = Field(default_factory=dict, description="As it was sent")
    window: list[Turn] = Field(
        default_factory=list, description="The turns around it in its session (the preset's "
        "expansion: 1 before, 2 after by default), in time, the hit left out; empty under "
        "max_messages and for methods that do not expand")


class FactHit(BaseModel):
    id: str
    subject: str
    type: str
    content: str
    valid_from: datetime
    valid_to: datetime | None
    score: float
    rules: list[Rule]
    sources: list[str]


class EpisodeHit(BaseModel):
    id: str
    title: str
    narrative: str
    reported_at: datetime
    occurred_at: datetime
    occurred_until: datetime
    score: float
    rules: list[Rule]
    messages: list[str]


class ChunkHit(BaseModel):
    """A chunk with its citation: document, version, section path and character offsets."""

    id: str
    document_id: str
    key: str
    version: int
    title: str | None
    section: list[str]
    start: int
    end: int
    text: str
    score: float
    rules: list[str] = Field(description="The lists that found it (vector, fulltext)")
    core: bool = Field(description="Found by the search (false: a neighbour added around a hit)")
    ordinal: int
    valid_from: datetime | None = Field(default=None, description="When its document version "
                                        "became valid")


class UnitRef(BaseModel):
    unit: Literal["message", "observation"]
    id: str


class SearchResult(BaseModel):
    query: str
    method: Method
    hits: list[Hit] = Field(description="At most k (or max_messages), best first (order=time: "
                            "in time)")
    observations: list[FactHit] = Field(default_factory=list, description="Best first")
    episodes: list[EpisodeHit] = Field(default_factory=list, description="Best first")
    chunks: list[ChunkHit] = Field(
        default_factory=list, description="With units=chunks: passages of the owner's "
        "documents valid at as_of, best first, each followed by its neighbours (with expand); "
        "`hits` is empty")
    interleaved: list[UnitRef] = Field(
        default_factory=list,
        description="With units=both: message nuclei and observations alternately, each in its "
        "own rank order")
    context: str = Field(description="The hits and their windows rendered for a prompt, in "
                         "time (one block per run of consecutive turns), after the facts")
    context_tokens: int
    trace: SearchTrace | None = Field(
        default=None, description="Method iterative with trace=true: how the result was found")


class TraceCandidate(BaseModel):
    unit: str
    id: str
    rank: int
    score: float
    lists: list[str] = Field(description="The recall lists (rules) that found it")


class TraceQuery(BaseModel):
    query: str
    candidates: list[TraceCandidate] = Field(description="Best first")
    reserved: str | None = Field(description="The id of the hit this query reserved, if any")
    ms: float


class TraceDecision(BaseModel):
    unit: str
    id: str
    action: Literal["kept", "dropped"]
    reason: str


class TraceRound(BaseModel):
    round: int
    queries: list[TraceQuery]
    decisions: list[TraceDecision]
    follow_ups: list[str] = Field(description="The queries the next round issues")
    sufficient: bool
    note: str = ""
    progress: bool
    error: str = Field(default="", description="Why the decider failed (the fallback applied)")
    recall_ms: float
    decide_ms: float


class SearchTrace(BaseModel):
    decider: str
    base: str = Field(description="The method each round's recall runs")
    rounds: list[TraceRound]
    stop: str = Field(description="sufficient, no_queries, rounds, no_progress or "
                      "decider_failed")
    decider_calls: int
    recalls: int
    core: list[str] = Field(description="Kept evidence, in the order it was kept")
    reserved: list[str] = Field(description="First hits of follow-up queries, in order")
    ms: float


class DeleteReport(BaseModel):
    owner: str
    messages: int
    sentences: int
    sessions: int
    facts: int = 0
    episodes: int = 0
    jobs: int = 0
    windows: int = 0
    procedural: int = 0
    entities: int = 0
    documents: int = Field(default=0, description="Document versions, their sections and "
                           "chunks, and the owner's topics")


# --- background jobs and audit queries, as the API shows them -----------------------------------

JobState = Literal["pending", "running", "done", "failed"]
STATES: tuple[JobState, ...] = ("pending", "running", "done", "failed")


class Job(BaseModel):
    tenant: str
    id: str
    kind: str
    key: str
    state: JobState
    attempts: int = Field(description="runs started (a rerun resets it)")
    max_attempts: int
    generation: int = Field(description="1 for the first job of this kind+key, then 2, ...")
    payload: dict[str, Any] = Field(default_factory=dict)
    owner: str | None = Field(default=None, description="whose data it works on, if anyone's")
    last_error: str | None = None
    created_at: datetime
    updated_at: datetime
    run_after: datetime = Field(description="not claimable before")
    lease_until: datetime | None = None
    started_at: datetime | None = Field(default=None, description="when the last run began")
    done_at: datetime | None = None
    worker: str | None = Field(default=None, description="who claimed it last")
    reruns: int = 0
    result: dict[str, Any] | None = Field(default=None, description="what the last completed "
                                          "run reported (e.g. formation's counts)")
    caption: str | None = None
    claim: str | None = Field(default=None, exclude=True, description="token of the last claim")

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Job:
        data = {k: v for k, v in row.items()
                if k not in ("payload_json", "result_json") and v is not None}
        result = json.loads(row["result_json"]) if row.get("result_json") else None
        return cls(**data, payload=json.loads(row.get("payload_json") or "{}"), result=result)


class JobList(BaseModel):
    jobs: list[Job]
    counts: dict[str, int] = Field(description="the tenant's jobs per state (all of them)")


class ExtractionRetryIn(_Strict):
    """Which episodes to extract facts from again: those whose last extraction ended with
    ``status`` (``all_dropped``: the model proposed facts and every one was dropped)."""

    status: Literal["all_dropped", "partial", "empty"] = "all_dropped"
    owner: str | None = Field(default=None, min_length=1, max_length=256,
                              description="only this owner's episodes (default: every owner's)")


class RetriedEpisode(BaseModel):
    id: str
    session_id: str
    owner: str


class ExtractionRetry(BaseModel):
    """The episodes made extractable again and the formation jobs that will extract them."""

    episodes: list[RetriedEpisode]
    jobs: list[str] = Field(description="ids of the form_session jobs (one per session)")


class AuditInfo(BaseModel):
    """A named read-only audit query: what it answers, its parameters and columns."""

    name: str
    purpose: str
    params: dict[str, str]
    columns: str
    example: str


class AuditResult(BaseModel):
    name: str
    rows: list[dict[str, Any]]


# --- Context and answers for agents (POST /v1/context, POST /v1/answer) ------------------------

ContextUnit = Literal["message", "episode", "fact", "skill", "chunk"]


class ContextRequest(_Strict):
    """What an agent asks for: the memory to put in its prompt for one question."""

    query: str = Field(min_length=1, max_length=4000, description="The question, as asked",
                       examples=["When did Caroline go to the LGBTQ support group?"])
    owner: str = Field(min_length=1, max_length=200, pattern=NAME, examples=["conv-26"])
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=NAME,
                                   description="Only messages of this session")
    as_of: UtcDatetime | None = Field(
        default=None, description="The question's date (default: now): facts valid then, no "
        "message or episode that happened after it, and the instant the question's own time "
        "expressions ('last year') are resolved against",
        examples=["2023-06-01T12:00:00Z"])
    max_tokens: int = Field(
        default=2000, ge=1, le=32_000, description="Budget of the rendered context, in the "
        "tokens `context_tokens` counts (words and punctuation marks)")
    k: int = Field(default=10, ge=1, le=50, description="Best hits per unit before packing "
                   "(a message hit brings the turns around it, packed after every hit)")
    units: list[ContextUnit] = Field(
        default=["message", "episode", "fact"], min_length=1, max_length=5,
        description="Which units may enter the context; 'skill' adds the best skill (a method "
        "learned from the owner's runs, valid at as_of) for a task request, with its supporting "
        "cases as sources; 'chunk' adds the k best passages of the owner's documents (the "
        "versions valid at as_of), each citing its document, version, section and offsets")
    documents: list[DocumentKey] | None = Field(
        default=None, min_length=1, max_length=100, description="Unit chunk: only the "
        "documents of these keys", examples=[["handbook/onboarding.md"]])
    topic: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=NAME, description="Unit chunk: "
        "only the documents filed under this topic of the owner (an id from GET /v1/topics)")
    metadata: MetadataFilter | None = Field(
        default=None, description=METADATA_FILTER + ". With unit chunk, the documents' "
        "metadata too, each value matched exactly (no lists or operators then). Facts and "
        "episodes carry no metadata: with a filter, units default to [\"message\"], and may "
        "be \"message\", \"chunk\" and \"skill\" only",
        examples=[{"channel": "slack"}])
    method: Method | None = Field(
        default=None, description="Search method for the messages; default: rrf_expand")
    preset: str | None = Field(default=None, description="Named retrieval preset")
    trace: bool = Field(default=False, description="Return how the context was built: the "
                        "search rounds and the packing")

    @model_validator(mode="before")
    @classmethod
    def _message_units(cls, data: Any) -> Any:
        """With a metadata filter, units default to messages alone."""
        if isinstance(data, dict) and data.get("metadata") and "units" not in data:
            return {**data, "units": ["message"]}
        return data

    @field_validator("metadata")
    @classmethod
    def _messages_only(cls, value: Any, info: ValidationInfo) -> Any:
        units = info.data.get("units")
        if value and isinstance(units, list) and "chunk" in units \
                and any(isinstance(v, list | dict) for v in value.values()):
            raise ValueError("with unit chunk, each value is matched exactly against the "
                             "documents' metadata (and the messages'): no lists or operators")
        return messages_only(value, info, {"message", "skill", "chunk"},
                             'ask units among "message", "chunk" and "skill"')

    @field_validator("documents", "topic")
    @classmethod
    def _chunk_only(cls, value: Any, info: ValidationInfo) -> Any:
        units = info.data.get("units")
        if value is not None and units is not None and "chunk" not in units:
            raise ValueError('filters documents only: add "chunk" to units')
        return value


class ContextItem(BaseModel):
    """One unit of the packed context, as it appears there (its line starts with ``[evidence]``)."""

    evidence: str = Field(description="Its short id in `context` (e1, e2, ...); answers cite it",
                          examples=["e3"])
    unit: ContextUnit
    id: str = Field(examples=["conv-26/D1:3"])
    text: str = Field(description="A message's text; an episode's title and narrative; a fact's "
                      "content; a skill's steps, when to use it and its pitfalls; a chunk's text")
    at: datetime = Field(description="A message's time, an episode's occurred_at, a fact's or a "
                         "skill's valid_from, a chunk's document version's valid_from")
    sources: list[str] = Field(description="What it rests on: a message itself; an episode's "
                               "messages; a fact's supporting messages, episodes or facts; a "
                               "skill's supporting cases; a chunk's document version")
    core: bool = Field(description="Found by the search itself (a hit); false: context added "
                       "around a hit (a neighbouring turn)")
    score: float
    rules: list[Rule]
    tokens: int = Field(description="Tokens of its line(s) in `context`")
    speaker: str | None = None
    session_id: str | None = None
    metadata: dict[str, Scalar] | None = Field(default=None, description="Messages: their "
                                               "metadata as sent")
    title: str | None = Field(default=None, description="Episodes; a skill's name; a "
                                 "chunk's document title")
    subject: str | None = Field(default=None, description="Facts")
    type: str | None = Field(default=None, description="Facts")
    valid_from: datetime | None = Field(default=None, description="Facts")
    valid_to: datetime | None = Field(default=None, description="Facts")
    document_id: str | None = Field(default=None, description="Chunks: the document version "
                                    "cited")
    key: str | None = Field(default=None, description="Chunks: the document's key")
    version: int | None = Field(default=None, description="Chunks: the version's number")
    section: list[str] | None = Field(default=None, description="Chunks: the headings from "
                                      "the top down to its section")
    start: int | None = Field(default=None, description="Chunks: character offset of its text "
                              "in the version's text (inclusive)")
    end: int | None = Field(default=None, description="Chunks: character offset (exclusive)")


class ItemRef(BaseModel):
    unit: ContextUnit
    id: str


class ContextTrace(BaseModel):
    """How a context was built."""

    searches: list[dict[str, object]] = Field(
        description="Each search run: its units, method and what it returned")
    rounds: list[dict[str, object]] = Field(
        default_factory=list, description="The search's own per-round trace (iterative methods)")
    candidates: int = Field(description="Units offered to packing")
    duplicates: int = Field(description="Units offered twice (same unit and id), kept once")
    kept: int
    over_budget: list[ItemRef] = Field(description="Units left out to stay within max_tokens")


class ContextResult(BaseModel):
    """The packed context: `context` goes into a prompt; `items` say where each line came from."""

    query: str
    owner: str
    as_of: datetime = Field(description="The instant facts were taken valid at")
    method: Method
    context: str = Field(
        description="Facts valid at as_of, then episodes, then messages (chronological, one "
        "block per run of a session); every line starts with its evidence id",
        examples=["## facts valid at 2023-06-01\n[e1] Caroline · event: Caroline attended an "
                  "LGBTQ support group (valid from 2023-05-07)\n\n## session conv-26/session_1 · "
                  "2023-05-08 13:56 UTC\n[e2] 2023-05-08 13:56 Caroline: I went to a LGBTQ "
                  "support group yesterday [2023-05-07] and it was so powerful."])
    context_tokens: int
    max_tokens: int
    items: list[ContextItem] = Field(description="In the order of `context`")
    trace: ContextTrace | None = None


class AnswerRequest(ContextRequest):
    """A question for the reader: the same fields as `ContextRequest` (``query`` is the
    question); the reader answers from that context only."""


class Citation(BaseModel):
    evidence: str = Field(examples=["e2"])
    unit: ContextUnit
    id: str = Field(examples=["conv-26/D1:3"])
    sources: list[str]


class AnswerResult(BaseModel):
    """The reader's answer with the context items it cites (every citation is an item of
    `context`; ids the reader made up are dropped and counted in `invented_citations`)."""

    query: str
    answer: str = Field(description="Short; empty or an explanation when `insufficient`",
                        examples=["7 May 2023"])
    insufficient: bool = Field(description="The context does not hold the answer")
    citations: list[Citation]
    sources: list[str] = Field(
        description="What the cited items rest on, once each: a cited message itself, an "
        "episode's messages, a fact's sources (messages, sometimes episodes or facts)",
        examples=[["conv-26/D1:3"]])
    invented_citations: list[str] = Field(
        description="Evidence ids the reader cited that are not in the context (dropped)")
    model: str
    prompt_tokens: int
    completion_tokens: int
    context: ContextResult


# --- forgetting one thing (DELETE /v1/messages/{id}, /v1/sessions/{id}, /v1/traces/{id}, ...) ---

ForgetKind = Literal["message", "session", "trace", "fact", "messages", "document"]


def _one_filter(schema: dict[str, Any]) -> None:
    schema["anyOf"] = [{"required": [name], "properties": {name: {"not": {"type": "null"}}}}
                       for name in ("metadata", "session_id", "time_from", "time_to")]


class ForgetMessages(_Strict):
    """Which of an owner's messages to forget: those matching every filter given (at least
    one: forgetting everything of an owner is ``DELETE /v1/owners/{owner}``)."""

    model_config = ConfigDict(json_schema_extra=_one_filter)

    owner: str = Field(min_length=1, max_length=200, pattern=NAME, examples=["alice"])
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=NAME,
                                   description="Only messages of this session")
    time_from: UtcDatetime | None = Field(default=None, description="inclusive, event time")
    time_to: UtcDatetime | None = Field(default=None, description="exclusive, event time")
    metadata: MetadataFilter | None = Field(
        default=None, validate_default=True, examples=[{"source": "gmail"}],
        description="Only messages whose metadata has, for every key, this value, one of the "
        "values listed, or what an object of operators asks, as in search")

    @field_validator("metadata")
    @classmethod
    def _some_filter(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and not any(info.data.get(f) is not None
                                     for f in ("session_id", "time_from", "time_to")):
            raise ValueError("give metadata, session_id, time_from or time_to (forgetting all "
                             "of an owner is DELETE /v1/owners/{owner})")
        return value

    def filter_key(self) -> str:
        """The filter as one canonical text (the audit record keeps its hash)."""
        return json.dumps({"owner": self.owner, "session_id": self.session_id,
                           "time_from": self.time_from.isoformat() if self.time_from else None,
                           "time_to": self.time_to.isoformat() if self.time_to else None,
                           "metadata": self.metadata}, sort_keys=True, ensure_ascii=False)


class ForgetReport(BaseModel):
    """What one forgetting removed, and what it set in motion."""

    kind: ForgetKind
    id: str
    """The id forgotten (for a session, its session id; for messages chosen by a filter, the
    filter as canonical JSON)."""
    owner: str | None = None
    """A session's owner (session ids are per owner), or the owner whose messages a filter
    chose; null for the other kinds."""
    already_forgotten: bool = False
    """True when this id had been forgotten before and is not stored now: nothing was done."""
    forgotten_at: datetime
    """When it was forgotten (before, for ``already_forgotten``)."""
    removed: dict[str, int] = Field(default_factory=dict)
    """Nodes removed, by kind (messages, sentences, windows, episodes, sessions, facts,
    traces, steps, cases, skills, clusters)."""
    facts: list[str] = Field(default_factory=list)
    """Ids of the facts removed (the forgotten fact, and those resting only on what went)."""
    episodes: list[str] = Field(default_factory=list)
    """Ids of the episodes removed (their other messages are formed again)."""
    supersessions: int = 0
    """SUPERSEDES edges removed with the facts (the facts on their other end stay as they are)."""
    reformation_jobs: list[str] = Field(default_factory=list)
    """Jobs enqueued (with the deletion) that form the remaining memory again."""
