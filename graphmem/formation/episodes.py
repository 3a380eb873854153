"""Episodes from segments of a session: title, narrative, participants, and the two times kept
apart: ``reported_at`` (when it was talked about) and ``occurred_at`` (when it happened, from the
time expressions the messages contain). Pure; the no-LLM narrator is extractive."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol

from graphmem import temporal
from graphmem.formation.observer import Turn, cosine, mean

TITLE_WORDS = 12
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Draft:
    turn_ids: list[str]
    title: str
    narrative: str
    participants: list[str]
    reported_at: datetime
    reported_until: datetime
    occurred_at: datetime
    occurred_until: datetime
    formed_by: str


class Narrator(Protocol):
    name: str

    def narrate(self, turns: Sequence[Turn]) -> tuple[str, str]:
        """(title, narrative) of an episode."""
        ...


def episode_id(owner: str, session_id: str, first_turn: str) -> str:
    """An episode is named by its first message: forming a session again finds the same ids."""
    key = "\x1f".join([owner, session_id, first_turn])
    return "e-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def annotated_lines(turns: Sequence[Turn]) -> list[str]:
    """``speaker: text`` with relative time expressions resolved against each message's time."""
    return [f"{t.speaker}: {temporal.annotate(t.text, t.timestamp)}" for t in turns]


class ExtractiveNarrator:
    """No LLM: the narrative is the messages themselves (times resolved); the title is the start
    of the most central message (closest to the episode's mean embedding)."""

    name = "extractive"

    def narrate(self, turns: Sequence[Turn]) -> tuple[str, str]:
        central = turns[0]
        vectors = [t.vector for t in turns if t.vector]
        if len(vectors) == len(turns) and vectors:
            centre = mean(vectors)
            substantial = [t for t in turns if len(t.text.split()) >= 8] or list(turns)
            central = max(substantial, key=lambda t: cosine(t.vector, centre))
        sentences = _SENTENCE.split(central.text.strip())
        words = max(sentences, key=lambda x: len(x.split())).split()
        title = " ".join(words[:TITLE_WORDS]) + ("..." if len(words) > TITLE_WORDS else "")
        return title, "\n".join(annotated_lines(turns))


def occurred(turns: Sequence[Turn]) -> tuple[datetime, datetime]:
    """When the episode's events happened: the span of the specific past days its messages
    mention ("yesterday", "last Friday", "on 3 May"), else the span of the messages themselves.
    Wider or vague mentions ("last week", "last year", "in 2016", "a few days ago") name no day
    and describe background: a chat of 14 February saying "last week was busy" happened on 14
    February, not on the Monday of the week before. Days after the message's own day are plans
    ("next Friday"), not what happened, and are left out too."""
    days: list[tuple[date, date]] = []
    for t in turns:
        said = t.timestamp.astimezone(UTC).date()
        found = temporal.find_expressions(t.text, t.timestamp)
        days.extend((x.first_day, x.last_day) for x in found
                    if x.granularity == "day" and not x.approximate and x.first_day <= said)
    if not days:
        return turns[0].timestamp, turns[-1].timestamp
    first = min(d[0] for d in days)
    last = max(d[1] for d in days)
    return (datetime.combine(first, time(), UTC),
            datetime.combine(last + timedelta(days=1), time(), UTC))


def draft(turns: Sequence[Turn], narrator: Narrator) -> Draft:
    title, narrative = narrator.narrate(turns)
    start, end = occurred(turns)
    return Draft(
        turn_ids=[t.id for t in turns], title=title, narrative=narrative,
        participants=list(dict.fromkeys(t.speaker for t in turns)),
        reported_at=turns[0].timestamp, reported_until=turns[-1].timestamp,
        occurred_at=start, occurred_until=end, formed_by=narrator.name,
    )
