"""Episodes from segments of a session: title, narrative, participants, and the two times kept
apart: ``reported_at`` (when it was talked about) and ``occurred_at`` (when it happened, from the
time expressions the messages contain). Pure; the no-LLM narrator is extractive, its title the
episode's keyphrases (`keyphrases`: class-based TF-IDF of the names and noun phrases of
`graphmem.entities.extract`, against the other episodes of the session)."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol

from graphmem.entities.extract import inner_names, mentions, normalise
from graphmem.formation.observer import Turn, cosine, mean
from graphmem.messages import temporal

TITLE_WORDS = 12
TITLE_PHRASES = 3
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

    def narrate(self, turns: Sequence[Turn],
                others: Sequence[Sequence[Turn]] = ()) -> tuple[str, str]:
        """(title, narrative) of an episode; ``others``: the other episodes of its session."""
        ...


def episode_id(owner: str, session_id: str, first_turn: str) -> str:
    """An episode is named by its first message: forming a session again finds the same ids."""
    key = "\x1f".join([owner, session_id, first_turn])
    return "e-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def annotated_lines(turns: Sequence[Turn]) -> list[str]:
    """``speaker: text`` with relative time expressions resolved against each message's time."""
    return [f"{t.speaker}: {temporal.annotate(t.text, t.timestamp)}" for t in turns]


def _terms(turns: Sequence[Turn]) -> list[str]:
    """The names and noun phrases each message mentions (each once a message), not the names of
    who speaks (greetings: "thanks Mel")."""
    known = inner_names(t.text for t in turns) | {normalise(t.speaker) for t in turns}
    speakers = {normalise(t.speaker) for t in turns}
    return [m.name for t in turns for m in mentions(t.text, None, (), known)
            if m.kind in ("name", "topic") and m.name not in speakers]


def keyphrases(turns: Sequence[Turn], others: Sequence[Sequence[Turn]] = (),
               limit: int = TITLE_PHRASES) -> list[str]:
    """What the episode is about: its names and noun phrases by class-based TF-IDF, each
    episode of the session a class (a term's count in the episode, times log(1 + A / f), A the
    mean number of terms an episode has, f the term's count over all of them), so that what
    this episode talks about more than the others ranks first; ties go to the earlier one.
    Written as in the messages ("Príncipe Real"); a phrase inside a better one is left out."""
    mine = Counter(_terms(turns))
    if not mine:
        return []
    classes = [mine, *(Counter(_terms(o)) for o in others)]
    total: Counter[str] = Counter()
    for c in classes:
        total.update(c)
    mean_terms = sum(total.values()) / len(classes)
    order = {t: n for n, t in enumerate(mine)}

    def weight(t: str) -> float:
        return mine[t] * math.log(1 + mean_terms / total[t])

    chosen: list[str] = []
    for t in sorted(mine, key=lambda t: (-weight(t), order[t])):
        if any(f" {t} " in f" {c} " or f" {c} " in f" {t} " for c in chosen):
            continue
        chosen.append(t)
        if len(chosen) == limit:
            break
    text = "\n".join(t.text for t in turns)
    return [_as_written(t, text) for t in chosen]


def _as_written(term: str, text: str) -> str:
    """The term as the messages write it (its first occurrence), else its normal form."""
    words = [re.escape(w) for w in term.split()]
    found = re.search(r"\b" + r"['’]?s?\W+".join(words) + r"(?:['’]?s|es)?\b", text,
                      re.IGNORECASE)
    return found.group(0) if found else term


def keyphrase_title(turns: Sequence[Turn], others: Sequence[Sequence[Turn]] = ()) -> str:
    """"Príncipe Real, flat and Bruno": the episode's keyphrases, or "" when it has none."""
    phrases = keyphrases(turns, others)
    if not phrases:
        return ""
    title = phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"
    return title[:1].upper() + title[1:]


class ExtractiveNarrator:
    """No LLM: the narrative is the messages themselves (times resolved); the title is the
    episode's keyphrases against the other episodes of its session (`keyphrase_title`), or,
    when it names nothing, the start of its most central message (closest to the episode's
    mean embedding)."""

    name = "extractive"

    def narrate(self, turns: Sequence[Turn],
                others: Sequence[Sequence[Turn]] = ()) -> tuple[str, str]:
        title = keyphrase_title(turns, others) or _central_sentence(turns)
        return title, "\n".join(annotated_lines(turns))


def _central_sentence(turns: Sequence[Turn]) -> str:
    """The start of the longest sentence of the most central substantial message."""
    central = turns[0]
    vectors = [t.vector for t in turns if t.vector]
    if len(vectors) == len(turns) and vectors:
        centre = mean(vectors)
        substantial = [t for t in turns if len(t.text.split()) >= 8] or list(turns)
        central = max(substantial, key=lambda t: cosine(t.vector, centre))
    sentences = _SENTENCE.split(central.text.strip())
    words = max(sentences, key=lambda x: len(x.split())).split()
    return " ".join(words[:TITLE_WORDS]) + ("..." if len(words) > TITLE_WORDS else "")


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


def draft(turns: Sequence[Turn], narrator: Narrator,
          others: Sequence[Sequence[Turn]] = ()) -> Draft:
    """The episode of ``turns``; ``others``: the other episodes of its session."""
    title, narrative = narrator.narrate(turns, others)
    start, end = occurred(turns)
    return Draft(
        turn_ids=[t.id for t in turns], title=title, narrative=narrative,
        participants=list(dict.fromkeys(t.speaker for t in turns)),
        reported_at=turns[0].timestamp, reported_until=turns[-1].timestamp,
        occurred_at=start, occurred_until=end, formed_by=narrator.name,
    )
