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
* NOOP profile operations write nothing: counted in ``noops``, not passed on;
* grounding (when an embedding function is given): a fact (its ``content``) or profile
  operation (``key value``) whose best cosine similarity to the texts of the messages it cites
  is below `MIN_SUPPORT` is dropped as ``ungrounded``: a model that cites a real message for
  something that message does not say is caught here.

The model sees the stretch's messages as ``m1`` .. ``mN`` (`aliases`): short ids it cannot
mistake for a placeholder, listed in the prompt and, in ``json_schema`` mode, the only values
the reply's schema allows in ``sources``; `extract` maps them back to the real ids.

`apply` writes the result through `Facts` (the Linker): ``observe`` and ``profile_ops``, each
called only when it has something to write. `ExtractionReport.summary` is what formation
records on the episode, in the job's result and in the usage counters: nothing is dropped
silently.
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
from graphmem.formation.prompts_extract import aliases, extract_messages
from graphmem.llm import LLMClient
from graphmem.llm.usage import DROP_REASONS
from graphmem.store.bundle import TenantStores

OPERATION = "extract_facts"
MIN_SUPPORT = 0.25
"""Least cosine similarity (all-MiniLM-L6-v2, the default embedder) between a claim and its
best cited message for the claim to count as grounded. On hand-made pairs, claims a message
states scored 0.38-0.89 against it and unrelated claims 0.01-0.05 (README "Formation")."""
Embed = Callable[[Sequence[str]], list[list[float]]]
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

    @property
    def proposed(self) -> int:
        return self.facts_proposed + self.profile_proposed

    @property
    def kept(self) -> int:
        return self.observations + self.profile_ops

    @property
    def status(self) -> str:
        """``empty`` (nothing proposed), ``ok`` (nothing dropped), ``partial`` (some dropped),
        ``all_dropped`` (proposals, but every one dropped: worth retrying with another prompt
        or model)."""
        dropped = sum(self.dropped.values())
        if not dropped:
            return "empty" if self.proposed == 0 else "ok"
        return "all_dropped" if self.kept == 0 else "partial"

    def summary(self) -> dict[str, Any]:
        """Plain JSON: status, proposed, kept, noops, dropped (reason -> count, every reason
        present), unknown_sources, bad_dates, clamped."""
        return {"status": self.status, "proposed": self.proposed, "kept": self.kept,
                "noops": self.noops,
                "dropped": {r: self.dropped.get(r, 0) for r in DROP_REASONS},
                "unknown_sources": self.unknown_sources, "bad_dates": self.bad_dates,
                "clamped": self.clamped}


class Writes(NamedTuple):
    observations: list[ObservationIn]
    profile_ops: list[ProfileOp]
    report: ExtractionReport


EXTRACTED_BY = "extraction"
"""The ``recorded_by`` of facts the LLM extraction of a background job writes."""


class FactsWriter(Protocol):
    """The part of `graphmem.facts.service.Facts` that `apply` uses."""

    def observe(self, stores: TenantStores, observations: Sequence[ObservationIn],
                visible: frozenset[str] | None = None,
                by: str | None = None) -> list[FactWrite]: ...
    def profile_ops(self, stores: TenantStores, ops: Sequence[ProfileOp],
                    visible: frozenset[str] | None = None,
                    by: str | None = None) -> list[FactWrite]: ...


def extract(
    client: LLMClient, owner: str, messages: Sequence[MessageLike], profile: Mapping[str, str]
) -> Extraction:
    """Ask the model for the facts and profile operations of ``messages`` (no call if empty).

    Sources come back as the messages' real ids (the model cites ``m1`` .. ``mN``); a cited
    value that is no alias is passed on unchanged (and `to_writes` checks it).
    """
    if not messages:
        return Extraction(facts=[], profile=[])
    names = aliases(messages)
    found = client.complete_structured(
        OPERATION, extract_messages(owner, messages, profile), Extraction,
        response_schema=reply_schema(list(names)),
    )
    for fact in found.facts:
        fact.sources = [names.get(_bare(s), s) for s in fact.sources]
    for op in found.profile:
        op.sources = [names.get(_bare(s), s) for s in op.sources]
    return found


def reply_schema(ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the reply with ``sources`` limited to ``ids`` (at least one)."""
    schema = Extraction.model_json_schema()
    sources = {"type": "array", "items": {"type": "string", "enum": list(ids)}, "minItems": 1}
    for name in ("ExtractedFact", "ExtractedProfileOp"):
        schema["$defs"][name]["properties"]["sources"] = sources
    return schema


def _bare(cited: str) -> str:
    return cited.strip().strip("[]").strip()


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
    kept = [c for s in cited if (c := _bare(s)) in known]
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


def to_writes(extraction: Extraction, owner: str, messages: Sequence[MessageLike],
              embed: Embed | None = None, min_support: float = MIN_SUPPORT) -> Writes:
    """The observations and profile operations to write, checked against the stretch (and, with
    ``embed``, grounded in the messages they cite)."""
    known = {m.id for m in messages}
    report = ExtractionReport(facts_proposed=len(extraction.facts),
                              profile_proposed=len(extraction.profile))
    observations = [o for f in extraction.facts
                    if (o := _observation(f, owner, known, report)) is not None]
    ops = [op for p in extraction.profile
           if (op := _profile_op(p, owner, known, report)) is not None]
    if embed is not None:  # a DELETE claims no value: nothing to ground
        checked = [op for op in ops if op.op != "DELETE"]
        claims = [o.content for o in observations]
        claims += [f"{op.key.replace('_', ' ')} {op.value}" for op in checked]
        cited = [o.sources for o in observations] + [op.sources for op in checked]
        weak = [s < min_support for s in support(claims, cited, messages, embed)]
        n = len(observations)
        weak_ops = {id(op) for op, w in zip(checked, weak[n:], strict=True) if w}
        observations = [o for o, w in zip(observations, weak[:n], strict=True) if not w]
        ops = [op for op in ops if id(op) not in weak_ops]
        if any(weak):
            report.dropped["ungrounded"] += sum(weak)
    report.observations, report.profile_ops = len(observations), len(ops)
    return Writes(observations, ops, report)


def support(claims: Sequence[str], cited: Sequence[Sequence[str]],
            messages: Sequence[MessageLike], embed: Embed) -> list[float]:
    """For each claim, the best cosine similarity to the text of one of its cited messages; one
    ``embed`` call for all of them. Speaker names are left out on both sides: a name shared
    by claim and message would lift every pair."""
    if not claims:
        return []
    text = {m.id: m.text for m in messages}
    ids = sorted({i for c in cited for i in c})
    vectors = [_unit(v) for v in embed([*claims, *(text[i] for i in ids)])]
    of = dict(zip(ids, vectors[len(claims):], strict=True))
    return [max((sum(a * b for a, b in zip(v, of[i], strict=True)) for i in c), default=0.0)
            for v, c in zip(vectors[: len(claims)], cited, strict=True)]


def _unit(v: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


def apply(
    facts: FactsWriter, stores: TenantStores, owner: str, messages: Sequence[MessageLike],
    extraction: Extraction, embed: Embed | None = None,
) -> ExtractionReport:
    """Check ``extraction`` (`to_writes`, grounded with ``embed`` when given) and write it
    through the Linker."""
    observations, ops, report = to_writes(extraction, owner, messages, embed)
    if observations:
        report.fact_writes = facts.observe(stores, observations, by=EXTRACTED_BY)
    if ops:
        report.profile_writes = facts.profile_ops(stores, ops, by=EXTRACTED_BY)
    return report
