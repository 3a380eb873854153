"""Pure pydantic models of what goes in and comes out. No I/O here."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Literal, Protocol

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

Scalar = str | int | float | bool | None
Rule = Literal["vector", "fulltext", "neighbour", "episode", "time", "window", "session"]
Method = Literal["fulltext", "vector", "rrf", "rrf_expand", "rrf_windows"]
Units = Literal["messages", "observations", "both", "episodes"]


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


MetaValue = Annotated[Scalar, AfterValidator(_finite)]
"""A metadata value a caller sends: a scalar, never NaN or an infinity."""
UtcDatetime = Annotated[datetime, BeforeValidator(utc_datetime)]
"""Every datetime a caller sends: ISO 8601 with an offset, in range, stored as UTC."""
IsoDate = Annotated[date, BeforeValidator(iso_date)]
"""Every date a caller sends: ISO 8601 ``YYYY-MM-DD``."""


NAME = r"^[^\x00-\x1f\x7f]+$"
"""Ids and names: no control characters (they would blur field boundaries in derived ids)."""


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
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


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
    metadata: dict[str, MetaValue] = Field(default_factory=dict)


class MessageBatch(_Strict):
    messages: list[MessageIn] = Field(min_length=1)


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
    metadata: dict[str, Scalar] = Field(default_factory=dict)


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
    k: int = Field(default=10, ge=1, le=200, description="How many hits (nuclei) to expand")
    expand: Expand | None = Field(
        default=None, description="Window around each hit; default: the preset's (1 before, 2 "
        "after in the default preset)")
    method: Method = "rrf_expand"
    max_messages: int | None = Field(
        default=None, ge=1, le=1000, description="Budget of returned messages after expansion"
    )
    preset: str | None = Field(default=None, description="Named retrieval preset")
    units: Units = Field(
        default="messages", description="What to recall: raw messages, observations, or both "
        "(ranked separately and interleaved, never score-compared); or episodes, each returned "
        "with all its source messages (they count against max_messages)")
    as_of: UtcDatetime | None = Field(
        default=None, description="Observations valid at this time (default: now); also the "
        "'now' against which the query's own time expressions are resolved")
    time_hint: Literal["boost", "restrict", "off"] = Field(
        default="boost", description="When the query names a time ('in May 2023', 'last "
        "year'): boost the messages of that time (an extra ranked list in the fusion of rrf and "
        "rrf_expand), keep only "
        "them, or ignore it")


class Hit(BaseModel):
    id: str
    text: str
    speaker: str
    timestamp: datetime
    session_id: str
    owner: str
    score: float = Field(description="Fused score of the nucleus this message belongs to")
    rules: list[Rule]
    nucleus: bool


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


class UnitRef(BaseModel):
    unit: Literal["message", "observation"]
    id: str


class SearchResult(BaseModel):
    query: str
    method: Method
    hits: list[Hit] = Field(description="Messages, in chronological order")
    observations: list[FactHit] = Field(default_factory=list, description="Best first")
    episodes: list[EpisodeHit] = Field(default_factory=list, description="Best first")
    interleaved: list[UnitRef] = Field(
        default_factory=list,
        description="With units=both: message nuclei and observations alternately, each in its "
        "own rank order")
    context: str
    context_tokens: int


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
