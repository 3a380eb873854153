"""Entity mentions of a text, without an LLM: names (capitalised spans), the speaker, the months
and years its time expressions resolve to, and salient words and word pairs. Pure and cheap
(regular expressions and a stopword list; well under a millisecond per chat turn).

Every entity is named by its normal form (`normalise`: case folded, possessive and punctuation
stripped), so "Caroline's", "CAROLINE" and "caroline" are one entity. Kinds:

- ``speaker``: who said the turn;
- ``name``: a capitalised span ("Lisbon", "Pride Parade", "LGBTQ") not at the start of a sentence,
  or at the start when the word is known as a name (a speaker, or seen capitalised inside a
  sentence elsewhere in the batch: ``known``);
- ``date``: a month ("2023-05") or, for a wider span inside one year, the year ("2023");
- ``topic``: a content word (not a stopword, at least 4 letters, a plural made singular) and a
  pair of adjacent content words ("support group").
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

MAX_TOPICS = 12
"""Topic mentions kept per text (the first ones; names, speakers and dates are all kept)."""

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+|[\[\]:;\"“”()]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-&]*")
_POSSESSIVE = re.compile(r"['’]s?$")
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NOT_NAMES = _words("""
i i'm i've i'll i'd im ive me my mine we we're us our you you're your he she it it's they
they're them their his her hers its hey hi hello wow oh ooh yeah yes yep no nope thanks thank
ok okay sure great awesome cool nice good congrats congratulations haha lol omg aw aww um uh
hmm well so and but or also the a an that this these those there here what when where why how
who which whoa yay bye goodbye sorry please dear mr mrs ms dr just wishing cheers alright right
love thats let let's lets same totally absolutely definitely exactly really true glad happy
""")
_MONTHS = _words("""january february march april may june july august september october
november december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
thursday friday saturday sunday""")

STOPWORDS = _words("""
a about above after again against all almost along already also although always am among an
and another any anyone anything anyway are around as at away back be became because become
been before being below besides best better between big both but by can can't cannot could
couldn't did didn't do does doesn't doing don't done down during each either else enough even
ever every everyone everything exactly far few first for from full further get gets getting
give given gives go goes going gone good got gotten great had hadn't has hasn't have haven't
having he he'd he's her here hers herself him himself his how however i i'd i'll i'm i've if
in into is isn't it it's its itself just keep keeps kind know knew known last least less let
let's like liked likes little lot lots made make makes making many may maybe me might mine
more most much must my myself need needs never new next nice no nor not nothing now of off
often oh ok okay on once one ones only onto or other others otherwise our ours ourselves out
over own part pretty quite rather really right said same say says see seem seemed seems seen
several shall she she'd she's should shouldn't since so some someone something sometimes
somewhat soon still such sure take taken takes taking tell than thank thanks that that's the
their theirs them themselves then there there's these they they'd they'll they're they've
thing things think thinking this those though thought through thus till to together too
took toward towards try trying under until up upon us use used using very want wanted wants
was wasn't way ways we we'd we'll we're we've well went were weren't what what's whatever
when where whether which while who who's whole whom whose why will with within without won't
would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself yourselves
amazing awesome cool wow hey hi hello haha glad happy love loved loves lovely wonderful
glad excited exciting hope hoping hoped feel feeling feels felt fun sounds sound totally
definitely absolutely super especially truly actually probably basically seriously
day days today tonight yesterday tomorrow week weeks weekend month months year years time
times ago recently lately always sometimes anymore everyday moment moments
come came coming comes look looking looks looked talk talking talked told hear heard
doing happen happened happens help helps helped stuff able sure true real keep kept
mean means meant lots bit bunch kinda gonna wanna gotta yeah yep nope
also there's here's it'll that'll i'd thing's what're ones guy guys folks
congrats congratulations appreciate appreciated thanks cheers wish wishes wishing
share shared sharing image photo picture pics pic
""")


@dataclass(frozen=True)
class Mention:
    name: str
    """The entity's normal form (`normalise`): the key of the entity per tenant and owner."""
    kind: str
    """``speaker``, ``name``, ``date`` or ``topic``."""


def normalise(text: str) -> str:
    """An entity's normal form: case folded, spacing collapsed, the possessive and the
    punctuation at the ends of each word stripped ("Caroline's!" -> "caroline")."""
    words = []
    for w in text.casefold().split():
        w = _EDGE.sub("", _POSSESSIVE.sub("", _EDGE.sub("", w)))
        if w:
            words.append(w)
    return " ".join(words)


def singular(word: str) -> str:
    """A cheap singular of a lower-case word ("stories" -> "story", "classes" -> "class",
    "games" -> "game"); words that only look plural ("glass", "bus", "tennis") stay."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _capitalised(word: str) -> bool:
    return word[0].isupper() and word.casefold() not in _NOT_NAMES


def sentences(text: str) -> list[list[str]]:
    """The words of each sentence (or bracketed or quoted part) of the text, in order."""
    return [ws for part in _SENTENCE.split(text) if (ws := _WORD.findall(part))]


def inner_names(texts: Iterable[str]) -> set[str]:
    """Normal forms of the capitalised words found inside a sentence (not at its start): the
    words known as names when they open a sentence elsewhere."""
    out: set[str] = set()
    for text in texts:
        for words in sentences(text):
            out.update(normalise(w) for w in words[1:] if _capitalised(w))
    return out - _MONTHS


def names(text: str, known: Collection[str] = ()) -> list[str]:
    """Normal forms of the names of a text: maximal runs of capitalised words; a run's first
    word at the start of a sentence counts only if it is in ``known`` (normal forms)."""
    out: list[str] = []
    for words in sentences(text):
        run: list[str] = []
        for i, w in enumerate([*words, ""]):
            if w and _capitalised(w) and normalise(w) not in _MONTHS and (
                    i > 0 or normalise(w) in known):
                run.append(w)
                continue
            if run:
                out.append(normalise(" ".join(run)))
                run = []
    return [n for n in dict.fromkeys(out) if n]


def topics(text: str, exclude: Collection[str] = (), limit: int = MAX_TOPICS) -> list[str]:
    """Salient words of the text (content words, singular) and pairs of adjacent content words,
    first occurrences first, at most ``limit``; names in ``exclude`` are left out."""
    out: dict[str, None] = {}
    for words in sentences(text):
        previous: str | None = None
        for w in words:
            lw = normalise(w)
            if (len(lw) < 4 or lw in STOPWORDS or not lw.isalpha() or lw in exclude):
                previous = None
                continue
            lw = singular(lw)
            if previous is not None:
                out.setdefault(f"{previous} {lw}", None)
            out.setdefault(lw, None)
            previous = lw
    return list(out)[:limit]


def date_names(ranges: Iterable[tuple[date, date]]) -> list[str]:
    """Month entities ("2023-05") of day ranges inside one month; year entities ("2023") of
    wider ranges inside one year; nothing for ranges over several years."""
    out: dict[str, None] = {}
    for a, b in ranges:
        if (a.year, a.month) == (b.year, b.month):
            out.setdefault(f"{a.year:04d}-{a.month:02d}", None)
        elif a.year == b.year:
            out.setdefault(f"{a.year:04d}", None)
    return list(out)


def mentions(text: str, speaker: str | None = None,
             dates: Sequence[tuple[date, date]] = (),
             known: Collection[str] = ()) -> list[Mention]:
    """Every entity the text mentions, each once: the speaker, names, dates, then topics."""
    found: dict[str, Mention] = {}
    if speaker and (who := normalise(speaker)):
        found[who] = Mention(who, "speaker")
    for n in names(text, known):
        found.setdefault(n, Mention(n, "name"))
    for d in date_names(dates):
        found.setdefault(d, Mention(d, "date"))
    for t in topics(text, exclude=found):
        found.setdefault(t, Mention(t, "topic"))
    return list(found.values())


def query_mentions(query: str, dates: Sequence[tuple[date, date]] = (),
                   known: Collection[str] = ()) -> list[Mention]:
    """The entities a search query names (no speaker; a capitalised first word counts too: the
    query is matched against stored entities, so a word that names none finds nothing)."""
    first = {normalise(w) for words in sentences(query) for w in words[:1]}
    return mentions(query, None, dates, {*known, *first})


def message_mentions(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The mention rows `write_mentions.cypher` takes ({message_id, owner, name, kind}, one per
    message and entity), for ingest rows ({id, owner, speaker, text, event_starts,
    event_ends}). A word opening a sentence counts as a name when it is a speaker of the batch
    or is capitalised inside a sentence somewhere in the batch. Sorted by entity (owner, name):
    every batch locks the entities it links in that one order, so concurrent batches of an
    owner wait for each other instead of deadlocking."""
    known = inner_names(r["text"] for r in rows) | {normalise(r["speaker"]) for r in rows}
    out: list[dict[str, Any]] = []
    for r in rows:
        dates = list(zip(r.get("event_starts") or (), r.get("event_ends") or (), strict=True))
        for m in mentions(r["text"], r["speaker"], dates, known):
            out.append({"message_id": r["id"], "owner": r["owner"], "name": m.name,
                        "kind": m.kind})
    return sorted(out, key=lambda x: (x["owner"], x["name"], x["message_id"]))
