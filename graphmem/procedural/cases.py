"""From a stretch of steps to a case: the request, the ordered actions, and a quality score with its
reason. Pure (the embedding of the intent is added by the service)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from graphmem.procedural import slots
from graphmem.procedural.models import Action, Outcome, Step

MAX_INTENT = 500
MAX_REQUEST = 4000
FILTER_BELOW = 0.3
"""A case of lower quality is kept and shown, but left out of clustering and skills."""
_GREETING = re.compile(r"^\s*((hi|hello|hey|good (morning|afternoon|evening)|greetings)"
                       r"( there)?[\s,!.]*)+", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def normalise_request(text: str) -> str:
    """The request as the intent: greeting dropped, spacing collapsed, at most `MAX_INTENT`."""
    text = _SPACE.sub(" ", _GREETING.sub("", text)).strip()
    return text[:MAX_INTENT]


_ENTITY = re.compile(r"[A-Za-z0-9_]*\d[A-Za-z0-9_]*|\b[A-Za-z]+_[A-Za-z0-9_]+|\b[A-Z]{3}\b")
MAX_ENTITIES = 100


MAX_VALUE_CHARS = 64
"""A longer argument value is free text (a reason, a summary), not a thing a case acted on."""


def entities(texts: Sequence[str], values: Iterable[str] = ()) -> list[str]:
    """The things a case is about: the tokens its request names with digits or underscores
    (ids, dates, amounts) and three-letter codes, and ``values`` (`written_values`), lower-cased,
    sorted, at most `MAX_ENTITIES`."""
    found = {t.lower() for text in texts for t in _ENTITY.findall(text) if len(t) > 1}
    return sorted(found | set(values))[:MAX_ENTITIES]


def written_values(steps: Sequence[Step]) -> list[str]:
    """The values the case's state-changing calls passed (a booking, flights, dates, a payment
    method, a cabin), lower-cased: two attempts at one request change the same things, while
    two requests of one customer about one booking (keep it, or move it to another airport)
    differ there. Booleans, nulls, one-character values and free text (over
    `MAX_VALUE_CHARS`) left out."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value).strip().lower()
            if 1 < len(text) <= MAX_VALUE_CHARS:
                found.add(text)

    for s in steps:
        if s.kind == "tool_call" and s.writes and s.arguments:
            try:
                walk(json.loads(s.arguments))
            except ValueError:
                continue
    return sorted(found)


def actions_of(steps: Sequence[Step]) -> list[Action]:
    """The tool calls in order, each with its typed slots (`slots.slots`); a write also with
    the earlier reads that passed one of its values (``get_reservation_details:reservation
    id``): the check made on the very thing it changes."""
    out: list[Action] = []
    reads: list[tuple[str, dict[str, str]]] = []
    for s in steps:
        if s.kind != "tool_call":
            continue
        tool = s.tool or ""
        checked: list[str] = []
        if s.writes:
            mine = slots.values(s.arguments)
            checked = sorted({f"{r}:{mine[v]}" for r, seen in reads for v in seen if v in mine})
        else:
            reads.append((tool, slots.values(s.arguments)))
        out.append(Action(tool=tool, keys=list(s.arg_keys), writes=bool(s.writes),
                          slots=slots.slots(s.arguments), checked=checked))
    return out


@dataclass(frozen=True)
class Quality:
    score: float
    reason: str

    @property
    def filtered(self) -> bool:
        return self.score < FILTER_BELOW


def quality(steps: Sequence[Step], outcome: Outcome) -> Quality:
    """How much a case can teach, 0..1, with the reasons for every deduction. A failed case is not
    of low quality: it is counter-evidence. What lowers quality is what makes a case hard to learn
    from: no request, no action, errors from tools, calls repeated in a loop, unknown outcome."""
    score, reasons = 1.0, []
    users = [s for s in steps if s.kind == "user" and s.text.strip()]
    calls = [s for s in steps if s.kind == "tool_call"]
    results = [s for s in steps if s.kind == "tool_result"]
    if not users:
        score -= 0.8
        reasons.append("no user request")
    if not calls:
        score -= 0.2
        reasons.append("no tool call")
    errors = sum(1 for s in results if s.error)
    if errors:
        share = errors / max(len(results), 1)
        score -= min(0.4, 0.5 * share)
        reasons.append(f"{errors} of {len(results)} tool results are errors")
    seen: dict[tuple[str | None, str | None], int] = {}
    for c in calls:
        seen[(c.tool, c.arguments)] = seen.get((c.tool, c.arguments), 0) + 1
    repeats = sum(n - 1 for n in seen.values() if n > 2)
    if repeats:
        score -= min(0.3, 0.1 * repeats)
        reasons.append(f"{repeats} repeated identical calls")
    if outcome == "unknown":
        score -= 0.1
        reasons.append("outcome unknown")
    score = round(max(0.0, min(1.0, score)), 3)
    return Quality(score, "; ".join(reasons) or "complete: request, actions, known outcome")


def case_id(trace_id: str, first_step: int) -> str:
    digest = hashlib.sha256(f"{trace_id}\x1f{first_step}".encode()).hexdigest()[:24]
    return f"case-{digest}"


@dataclass(frozen=True)
class CaseDraft:
    id: str
    intent: str
    request: str
    actions: list[Action]
    occurred_at: datetime
    quality: Quality
    step_indices: list[int]
    entities: list[str]

    @property
    def writes(self) -> list[str]:
        return [a.tool for a in self.actions if a.writes]

    def action_tokens(self) -> list[str]:
        return [a.tool for a in self.actions]


def draft(trace_id: str, task: str | None, stretch: Sequence[Step], outcome: Outcome,
          started_at: datetime) -> CaseDraft:
    """A case from one stretch. The intent is the first user turn with words (normalised); the
    caller's ``task`` wins for the first stretch when given."""
    users = [s.text for s in stretch if s.kind == "user" and s.text.strip()]
    first = stretch[0].index
    intent = normalise_request(task) if task and first == 0 else ""
    intent = intent or (normalise_request(users[0]) if users else "")
    request = _SPACE.sub(" ", " \n".join(users)).strip()[:MAX_REQUEST]
    times = [s.at for s in stretch if s.at is not None]
    return CaseDraft(case_id(trace_id, first), intent, request, actions_of(stretch),
                     min(times) if times else started_at, quality(stretch, outcome),
                     [s.index for s in stretch], entities(users, written_values(stretch)))
