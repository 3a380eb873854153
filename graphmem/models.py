"""Pure pydantic models of what goes in and comes out. No I/O here."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, Protocol

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

Scalar = str | int | float | bool | None
Rule = Literal["vector", "fulltext", "neighbour", "episode", "time"]
Method = Literal["fulltext", "vector", "rrf", "rrf_expand"]
Units = Literal["messages", "observations", "both", "episodes"]


def utc(ts: datetime) -> datetime:
    """The same instant in UTC. Naive datetimes are refused upstream (AwareDatetime)."""
    return ts.astimezone(UTC)


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
    timestamp: AwareDatetime = Field(
        description="ISO 8601 with an offset, e.g. 2023-05-08T13:56:00Z"
    )
    metadata: dict[str, Scalar] = Field(default_factory=dict)

    @field_validator("timestamp")
    @classmethod
    def _to_utc(cls, v: datetime) -> datetime:
        return utc(v)


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
    time_from: AwareDatetime | None = Field(default=None, description="inclusive, event time")
    time_to: AwareDatetime | None = Field(default=None, description="exclusive, event time")
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
    as_of: AwareDatetime | None = Field(
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
