"""Fact extraction from a formed stretch of conversation: observations and profile operations.

`extract` asks the LLM (operation ``"extract_facts"``; retries and malformed replies are the
`LLMClient`'s business, persistent failure is its `LLMFailure`). `to_writes` checks what the model
said before anything is written, and counts what it dropped and why (`ExtractionReport`):

* sources are kept only when they are ids of the stretch's messages (``[m1]`` is read as ``m1``;
  others are counted in ``unknown_sources``); a fact or profile operation left with no valid
  source cannot be audited, so it is dropped (``no_source``), explicit or inferred alike;
* ``valid_from``: an ISO date is midnight UTC, a datetime without offset is UTC, ``2023-05`` and
  ``2023`` are the first day, ``~`` and ranges ``a..b`` (as annotate() writes them) take the start;
  missing means None (the Linker then uses the earliest source message's time); anything else is
  None too, counted in ``bad_dates``;
* types and profile keys are made snake_case; empty content, subject or type is ``empty``; what
  `ObservationIn`/`ProfileOp` refuse (too long, ADD without a value) is ``invalid``;
* confidence is clamped to [0, 1] (counted in ``clamped``); NaN is None;
* NOOP profile operations write nothing: counted in ``noops``, not passed on.

`apply` writes the result through `Facts` (the Linker): ``observe`` and ``profile_ops``, each
called only when it has something to write.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from graphmem.facts.models import FactWrite, ObservationIn, ProfileOp, ProfileOpKind
from graphmem.formation.prompts_extract import MessageLike as MessageLike
from graphmem.formation.prompts_extract import extract_messages
from graphmem.llm import LLMClient

OPERATION = "extract_facts"
_PARTIAL = re.compile(r"(\d{4})(?:-(\d{2}))?")
T = TypeVar("T")


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)


class ExtractedFact(_Reply):
    subject: str
    type: str
    content: str
    valid_from: str | None = None
    explicit: bool
    confidence: float | None = None
    sources: list[str]


class ExtractedProfileOp(_Reply):
    op: ProfileOpKind
    key: str
    value: str | None = None
    explicit: bool
    sources: list[str]

    @field_validator("op", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.strip().upper() if isinstance(v, str) else v


class Extraction(_Reply):
    """The model's reply. Both lists are required (empty when there is nothing)."""

    facts: list[ExtractedFact]
    profile: list[ExtractedProfileOp]


@dataclass
class ExtractionReport:
    """What `to_writes` kept and dropped (reason -> count); `apply` adds what was written."""

    facts_proposed: int = 0
    profile_proposed: int = 0
    observations: int = 0
    profile_ops: int = 0
    noops: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    unknown_sources: int = 0
    bad_dates: int = 0
    clamped: int = 0
    fact_writes: list[FactWrite] = field(default_factory=list)
    profile_writes: list[FactWrite] = field(default_factory=list)


class Writes(NamedTuple):
    observations: list[ObservationIn]
    profile_ops: list[ProfileOp]
    report: ExtractionReport


class FactsWriter(Protocol):
    """The part of `graphmem.facts.service.Facts` that `apply` uses."""

    def observe(self, tenant: str, observations: Sequence[ObservationIn]) -> list[FactWrite]: ...
    def profile_ops(self, tenant: str, ops: Sequence[ProfileOp]) -> list[FactWrite]: ...


def extract(
    client: LLMClient, owner: str, messages: Sequence[MessageLike], profile: Mapping[str, str]
) -> Extraction:
    """Ask the model for the facts and profile operations of ``messages`` (no call if empty)."""
    if not messages:
        return Extraction(facts=[], profile=[])
    return client.complete_structured(
        OPERATION, extract_messages(owner, messages, profile), Extraction
    )


def parse_when(value: str | None) -> datetime | None:
    """A model's ``valid_from`` as an aware UTC datetime (see the module docstring).

    None for a missing value; raises ValueError for one that cannot be read.
    """
    text = (value or "").strip().lstrip("~").split("..")[0].strip()
    if text.lower() in ("", "null", "none", "unknown"):
        return None
    partial = _PARTIAL.fullmatch(text)
    if partial:
        return datetime(int(partial[1]), int(partial[2] or 1), 1, tzinfo=UTC)
    parsed = datetime.fromisoformat(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _snake(name: str) -> str:
    return re.sub(r"\W+", "_", name.strip().lower()).strip("_")


def _sources(cited: list[str], known: set[str], report: ExtractionReport) -> list[str]:
    """The cited ids that are the stretch's messages; none left counts as ``no_source``."""
    kept = [c for s in cited if (c := s.strip().strip("[]").strip()) in known]
    report.unknown_sources += len(cited) - len(kept)
    if not kept:
        report.dropped["no_source"] += 1
    return list(dict.fromkeys(kept))


def _valid(make: Callable[[], T], report: ExtractionReport) -> T | None:
    """``make()``, or None counted as ``invalid`` when the model refuses the values."""
    try:
        return make()
    except ValidationError:
        report.dropped["invalid"] += 1
        return None


def _observation(
    f: ExtractedFact, owner: str, known: set[str], report: ExtractionReport
) -> ObservationIn | None:
    subject, type_, content = f.subject.strip(), _snake(f.type), f.content.strip()
    if not (subject and type_ and content):
        report.dropped["empty"] += 1
        return None
    if not (sources := _sources(f.sources, known, report)):
        return None
    try:
        valid_from = parse_when(f.valid_from)
    except ValueError:
        valid_from, report.bad_dates = None, report.bad_dates + 1
    confidence = None if f.confidence is None or math.isnan(f.confidence) else f.confidence
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        confidence, report.clamped = min(1.0, max(0.0, confidence)), report.clamped + 1
    return _valid(lambda: ObservationIn(
        owner=owner, subject=subject, type=type_, content=content, valid_from=valid_from,
        explicit=f.explicit, confidence=confidence, sources=sources), report)


def _profile_op(
    p: ExtractedProfileOp, owner: str, known: set[str], report: ExtractionReport
) -> ProfileOp | None:
    if p.op == "NOOP":
        report.noops += 1
        return None
    key, value = _snake(p.key), (p.value or "").strip() or None
    if not key:
        report.dropped["empty"] += 1
        return None
    if not (sources := _sources(p.sources, known, report)):
        return None
    return _valid(lambda: ProfileOp(op=p.op, owner=owner, key=key, explicit=p.explicit,
                                    sources=sources, value=None if p.op == "DELETE" else value),
                  report)


def to_writes(extraction: Extraction, owner: str, messages: Sequence[MessageLike]) -> Writes:
    """The observations and profile operations to write, checked against the stretch."""
    known = {m.id for m in messages}
    report = ExtractionReport(facts_proposed=len(extraction.facts),
                              profile_proposed=len(extraction.profile))
    observations = [o for f in extraction.facts
                    if (o := _observation(f, owner, known, report)) is not None]
    ops = [op for p in extraction.profile
           if (op := _profile_op(p, owner, known, report)) is not None]
    report.observations, report.profile_ops = len(observations), len(ops)
    return Writes(observations, ops, report)


def apply(
    facts: FactsWriter, tenant: str, owner: str, messages: Sequence[MessageLike],
    extraction: Extraction,
) -> ExtractionReport:
    """Check ``extraction`` (`to_writes`) and write it through the Linker."""
    observations, ops, report = to_writes(extraction, owner, messages)
    if observations:
        report.fact_writes = facts.observe(tenant, observations)
    if ops:
        report.profile_writes = facts.profile_ops(tenant, ops)
    return report
