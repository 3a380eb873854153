"""Facts with validity intervals: observations and profile facts (pure pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from graphmem.models import NAME, UtcDatetime

Cardinality = Literal["single", "multi"]
ProfileOpKind = Literal["ADD", "UPDATE", "DELETE", "NOOP"]


class _In(BaseModel):
    """A request body: no unknown field, no value of another JSON type coerced."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)


class ObservationIn(_In):
    """A fact an agent states (explicit) or infers. ``recorded_at`` is set by the server."""

    id: str | None = Field(default=None, min_length=1, max_length=200, pattern=NAME)
    owner: str = Field(min_length=1, max_length=200, pattern=NAME)
    subject: str = Field(min_length=1, max_length=500)
    type: str = Field(min_length=1, max_length=200, pattern=NAME, description="The predicate")
    content: str = Field(min_length=1, max_length=20_000)
    valid_from: UtcDatetime | None = Field(
        default=None,
        description="When it became true (event time). Default: the earliest source message's "
        "timestamp, else the time of recording.",
    )
    valid_to: UtcDatetime | None = Field(default=None, description="Exclusive; null: open")
    explicit: bool = True
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    sources: list[str] = Field(default_factory=list, max_length=100,
                               description="Message, episode or observation ids")
    cardinality: Cardinality | None = Field(
        default=None, description="Declare the type single- or multi-valued for this request; "
        "default from settings (fact_types)")
    reason: str | None = Field(default=None, max_length=2000,
                               description="Why this revises an earlier fact (kept on SUPERSEDES)")

    @field_validator("valid_to")
    @classmethod
    def _after_start(cls, v: datetime | None, info: ValidationInfo) -> datetime | None:
        start = info.data.get("valid_from")
        if v is not None and start is not None and v <= start:
            raise ValueError("valid_to must be after valid_from (intervals are [from, to))")
        return v


MAX_OBSERVATIONS = 500
ObservationList = Annotated[list[ObservationIn], Field(min_length=1, max_length=MAX_OBSERVATIONS)]
"""Observations of one request: the length is checked before any item is validated."""


class ObservationBatch(_In):
    observations: ObservationList


class Supersession(BaseModel):
    """A SUPERSEDES edge: ``by`` replaced ``of`` (recorded at ``at``, for ``reason``)."""

    by: str
    of: str
    at: datetime
    reason: str
    source: str | None = None


class Fact(BaseModel):
    """A stored observation or profile fact."""

    id: str
    kind: Literal["observation", "profile"]
    owner: str
    subject: str
    type: str
    content: str | None
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    recorded_by: str | None = Field(
        default=None, description="Who recorded this version: the id of the API key that sent "
        "it, anonymous, cli, mcp-stdio, or extraction (a background job); null from the "
        "library or for versions recorded before callers were kept")
    invalidated_at: datetime | None
    explicit: bool
    confidence: float | None = None
    cardinality: Cardinality
    deleted: bool = False
    sources: list[str] = Field(default_factory=list)


class FactWrite(BaseModel):
    """What one written observation did."""

    id: str
    action: Literal["created", "supported", "noop"]
    superseded: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    """Set when the fact was placed into history: a later value was already recorded."""


class FactHistory(BaseModel):
    facts: list[Fact]
    supersessions: list[Supersession]


class ProfileOp(_In):
    model_config = ConfigDict(json_schema_extra={  # with _In's config
        "if": {"properties": {"op": {"enum": ["ADD", "UPDATE"]}}, "required": ["op"]},
        "then": {"required": ["value"],
                 "properties": {"value": {"type": "string", "pattern": r"\S"}}}})
    """ADD and UPDATE need a value (documented for clients; the validator below checks it)."""

    op: ProfileOpKind
    owner: str = Field(min_length=1, max_length=200, pattern=NAME)
    key: str = Field(min_length=1, max_length=200, pattern=NAME)
    value: str | None = Field(default=None, max_length=20_000)
    explicit: bool = True
    valid_from: UtcDatetime | None = None
    sources: list[str] = Field(default_factory=list, max_length=100)
    reason: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _value(self) -> ProfileOp:
        if self.op in ("ADD", "UPDATE") and not self.value:
            raise ValueError(f"{self.op} needs a value")
        return self


ProfileOpList = Annotated[list[ProfileOp], Field(min_length=1, max_length=MAX_OBSERVATIONS)]
"""Profile operations of one request: the length is checked before any item is validated."""


class ProfileOps(_In):
    ops: ProfileOpList
