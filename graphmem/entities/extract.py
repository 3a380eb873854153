"""Entity mentions of a text, without an LLM: names (capitalised spans), the speaker, the months
and years its time expressions resolve to, and the things it talks about (noun phrases). Pure and
cheap (regular expressions, a stopword list and lemminflect's English lexicon: a few
microseconds a word).

Every entity is named by its normal form (`normalise`: case folded, possessive and punctuation
stripped, letters of every script kept), so "Caroline's", "CAROLINE" and "caroline" are one
entity, and "Príncipe Real" is "príncipe real". Kinds:

- ``speaker``: who said the turn;
- ``name``: a capitalised span ("Lisbon", "Pride Parade", "LGBTQ", "Hospital de Santa Maria",
  "Dr. Okafor") not at the start of a sentence; at the start when the word is known as a name (a
  speaker, or seen capitalised inside a sentence elsewhere in the batch: ``known``), is no
  English word (lemminflect's lexicon does not hold it: "Tariq"), or opens a capitalised run
  ("Flow House"); "Mum", "Dad", "Grandma" when capitalised;
- ``date``: a month ("2023-05") or, for a wider span inside one year, the year ("2023");
- ``topic``: a noun phrase of up to three words ("support group", "dog", "pottery class"), in
  the singular. A word counts when the lexicon knows it as a noun (and, for a word that is also
  a verb or an adjective, its neighbours say it is used as one: "my work" but not "I work", "the
  past" but not "a past life"), or as an activity ("went hiking"), or is unknown to it ("café",
  "Netflix"); verbs ("moved", "called"), adjectives and adverbs never count;
- ``link`` (hidden, named ``noun:…`` or ``verb:…``): a walk link (`links`), the lemma of a
  noun or a verb the text uses, which only the ``graph`` walk reads; the places that list
  entities leave it out.

Why the lexicon and not a tagger: `lemminflect` ships its lexicon in the wheel (no model to
fetch), answers from a dictionary, and keeps extraction on the ingest path at a few
microseconds a word; a statistical tagger would cost milliseconds a message. Measured against
hand-labelled chat turns in ``tests/unit/data/entities_labelled.jsonl``
(``tests/unit/test_entities_precision.py``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

import lemminflect

MAX_TOPICS = 12
"""Topic mentions kept per text (the first ones; names, speakers and dates are all kept)."""

_SENTENCE = re.compile(  # not after a title's dot: "Dr. Okafor" stays one sentence
    r"(?<=[.!?…])(?<![DdMm]r\.)(?<![Mm]rs\.)(?<![Mm]s\.)(?<![Ss]t\.)\s+|\n+|[\[\]:;\"“”()]")
_WORD = re.compile(r"[^\W_][\w'’\-&]*")  # letters and digits of every script
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
ugh woah ha hah ahh aha argh yup nah meh eh oops lmao welcome sent deal fingers honestly
anyway maybe sounds
""")
_LAUGH = re.compile(r"(?:a?h+[aeiou]+)+h*|l+o+l+|x+d+|a+w+|o+h+|u+m+|h+m+|z+", re.IGNORECASE)
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "st", "prof", "sir", "saint"})
"""Open a name when a capitalised word follows: "Dr. Okafor", "St Thomas"."""
_CONNECTORS = frozenset({"de", "da", "do", "dos", "das", "del", "della", "di", "du", "van",
                         "von", "der", "den", "la", "le", "of", "y"})
"""Stay inside a name between capitalised words: "Hospital de Santa Maria", "Bank of Spain"."""
_KIN = frozenset({"mum", "mom", "mommy", "mummy", "dad", "daddy", "grandma", "grandpa",
                  "granny", "grandad", "nana", "papa", "auntie", "uncle"})
"""Capitalised, these name a person wherever they stand ("Mum's surgery went well")."""
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
one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
hundred thousand million ton tons loads sort type piece place
people person anybody anyone anything everybody everyone everything nobody nothing somebody
someone something somewhere anywhere everywhere nowhere idea sense chance matter reason
thing stuff way ways part end start deal news luck fun question answer tip tips number
morning afternoon evening night minute minutes hour hours second seconds life world
""")
_VERB_CONTEXT = _words("""i you we they he she it i'm you're we're they're he's she's it's
i've you've we've they've i'd you'd we'd they'd i'll you'll we'll they'll he'll she'll
to will would can could should must might may shall do does did don't doesn't didn't can't
couldn't won't wouldn't shouldn't never just also really always often still even finally
already let's lets please am is are was were be been being isn't aren't wasn't weren't""")
"""Before a word that is also a noun, these say it is used as a verb ("I work", "to plan")."""
_GERUND_AFTER = _words("""go goes going went gone love loves loved like likes liked enjoy
enjoys enjoyed hate hates hated try tries tried about for after before by into from do does
did doing with at""")
"""Before a verb's -ing form, these make it an activity: "went hiking", "love painting"."""
_SUBJECT_OF = _words("""is was has had helps helped makes made keeps kept can will""")
"""After a sentence's first word, these make it a noun ("Swimming is great", "Work was
busy"); a first word that is also a verb is otherwise read as an imperative ("Ice it")."""
_VERB_OBJECT = _words("""the a an my your his her our their me him them us it up out off down
back away over""")
"""After a word that is also a verb, these make it one ("cats hate the rain", "kids wake up")."""
_BEFORE_ADJECTIVE = _words("""so very too quite pretty super more most less least rather how
such sounds sound seems seem looks look feels feel felt became become get gets got getting
good great nice bad haha""")
"""Before a word that is also an adjective, these make it one ("so kind", "sounds solid")."""


@dataclass(frozen=True)
class Mention:
    name: str
    """The entity's normal form (`normalise`): the key of the entity per tenant and owner."""
    kind: str
    """``speaker``, ``name``, ``date``, ``topic`` or ``link`` (a hidden walk link)."""


def normalise(text: str) -> str:
    """An entity's normal form: case folded, spacing collapsed, the possessive and the
    punctuation at the ends of each word stripped ("Caroline's!" -> "caroline")."""
    words = []
    for w in text.casefold().split():
        w = _EDGE.sub("", _POSSESSIVE.sub("", _EDGE.sub("", w)))
        if w:
            words.append(w)
    return " ".join(words)


def _capitalised(word: str) -> bool:
    return word[0].isupper() and word.casefold() not in _NOT_NAMES


@lru_cache(maxsize=65536)
def _lexicon(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's parts of speech of a lower-case word, each with its lemmas ({} unknown)."""
    return dict(lemminflect.getAllLemmas(word))


def _no_word(word: str) -> bool:
    """Not an English word that could start a sentence: letters unknown to the lexicon, and no
    laugh ("Tariq", "Kraków"; not "Haha", "She'll")."""
    lw = normalise(word)
    return (len(lw) > 1 and lw.isalpha() and not _lexicon(lw) and lw not in STOPWORDS
            and lw not in _NOT_NAMES and _LAUGH.fullmatch(lw) is None)


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


def _name_word(words: Sequence[str], i: int, known: Collection[str]) -> bool:
    """Does the word at ``i`` belong to a name (see the module's docstring)?"""
    w = words[i]
    lw = normalise(w)
    if not w[0].isupper() or lw in _MONTHS or singular(lw) in _MONTHS:
        return False
    following = i + 1 < len(words) and _capitalised(words[i + 1])
    if lw in _TITLES:
        return following
    if lw in _KIN:
        return True
    if not _capitalised(w):
        return False
    return i > 0 or lw in known or _no_word(w) or (following and lw not in STOPWORDS)


def _name_runs(words: Sequence[str], known: Collection[str]) -> Iterable[tuple[int, int]]:
    """(start, end) of each name in a sentence's words: maximal runs of name words, joined
    across a connector between two of them ("Hospital de Santa Maria")."""
    i = 0
    while i < len(words):
        if not _name_word(words, i, known):
            i += 1
            continue
        j = i + 1
        while j < len(words):
            if _name_word(words, j, known) or (
                    normalise(words[j]) in _TITLES and j + 1 < len(words)
                    and _capitalised(words[j + 1])):
                j += 1
            elif (words[j].casefold() in _CONNECTORS and j + 1 < len(words)
                  and _name_word(words, j + 1, known)):
                j += 2
            else:
                break
        yield i, j
        i = j


def names(text: str, known: Collection[str] = ()) -> list[str]:
    """Normal forms of the names of a text: runs of capitalised words; a run's first word at
    the start of a sentence counts only if it is in ``known`` (normal forms), is no English
    word, or another capitalised word follows it."""
    out = [normalise(" ".join(words[a:b])) for words in sentences(text)
           for a, b in _name_runs(words, known)]
    return [n for n in dict.fromkeys(out) if n]


def singular(word: str) -> str:
    """The singular of a lower-case noun: the lexicon's lemma ("stories" -> "story", "children"
    -> "child"), else a cheap rule ("cafés" -> "café"); words that only look plural ("glass",
    "bus", "tennis") stay."""
    lemmas = _lexicon(word).get("NOUN")
    if lemmas:
        return lemmas[0]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _plain(word: str) -> bool:
    """A word a topic may hold: letters (hyphenated parts too), at least 3, no stopword."""
    return (len(word) >= 3 and word not in STOPWORDS and word not in _NOT_NAMES
            and word not in _MONTHS and _LAUGH.fullmatch(word) is None
            and all(part.isalpha() for part in word.split("-")))


def _known_noun(word: str) -> bool:
    return _plain(word) and "NOUN" in _lexicon(word)


def _is_noun(words: Sequence[str], i: int, in_phrase: bool) -> bool:
    """Is the lower-case word at ``i`` used as a noun here (see the module's docstring)?
    ``in_phrase``: a noun comes right before it."""
    w = words[i]
    pos = _lexicon(w)
    before = words[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    if not pos:  # unknown: a noun, unless it stands before a known one ("wonky bowl")
        return len(w) >= 4 and not _known_noun(after)
    if "NOUN" not in pos:  # a verb's -ing form as an activity ("went hiking", "running club")
        return ("VERB" in pos and w.endswith("ing") and set(pos) == {"VERB"}
                and before not in _VERB_CONTEXT
                and (before in _GERUND_AFTER or _known_noun(after)
                     or (i == 0 and after in _SUBJECT_OF)))
    if "ADJ" in pos or "ADV" in pos:  # "the past", not "a past life", "it's real", "so kind"
        return (before not in _VERB_CONTEXT and before not in _BEFORE_ADJECTIVE
                and not _known_noun(after) and after not in ("one", "ones")
                and (i > 0 or after in _SUBJECT_OF))
    if "VERB" in pos:  # "my work", not "I work", "Ice it", "cats hate the rain"
        if i == 0:  # an imperative, unless a plural ("Cats hate the rain") or a subject
            return after in _SUBJECT_OF or not after or pos["NOUN"][0] != w
        return before not in _VERB_CONTEXT and not (
            in_phrase and (after in _VERB_OBJECT or after.endswith("ing")))
    return True


def topics(text: str, exclude: Collection[str] = (), limit: int = MAX_TOPICS) -> list[str]:
    """The noun phrases of the text (runs of up to three nouns, the last one singular, a
    possessive ending one), first occurrences first, at most ``limit``; names (capitalised
    inside a sentence) and words in ``exclude`` are left out."""
    out: dict[str, None] = {}
    for words in sentences(text):
        lower = [normalise(w) for w in words]
        run: list[str] = []
        for i, w in enumerate(words):
            lw = lower[i]
            noun = ((i == 0 or not w[0].isupper()) and _plain(lw) and lw not in exclude
                    and _is_noun(lower, i, bool(run)))
            if run and (not noun or len(run) == 3):
                out.setdefault(" ".join([*run[:-1], singular(run[-1])]), None)
                run = []
            if noun:
                run.append(lw)
                if _POSSESSIVE.search(w):  # "his brother's wedding": two things
                    out.setdefault(" ".join([*run[:-1], singular(run[-1])]), None)
                    run = []
        if run:
            out.setdefault(" ".join([*run[:-1], singular(run[-1])]), None)
    return list(out)[:limit]


LINK = "link"
"""The kind of a walk link (`links`): not an entity a person would mark, so never listed as one."""
NOUN_LINK = "noun:"
VERB_LINK = "verb:"


def links(text: str, exclude: Collection[str] = ()) -> list[str]:
    """The walk links of a text: ``noun:<lemma>`` for every word of its noun phrases (singular;
    "pottery class" gives ``noun:pottery`` and ``noun:class``) and ``verb:<lemma>`` for every
    verb ("painted" gives ``verb:paint``), first occurrences first; words in ``exclude`` (normal
    forms) are left out, as are capitalised words inside a sentence (names). Only the ``graph``
    walk reads them: a message that talks about "the class" meets one about "my pottery class",
    and one where someone "painted" meets a question about what they paint, though their noun
    phrases differ. The prefixes keep them apart from entity names (a normal form holds no
    colon)."""
    out: dict[str, None] = {}
    for phrase in topics(text, exclude=exclude, limit=len(text)):
        for w in phrase.split():
            out.setdefault(NOUN_LINK + singular(w), None)
    for words in sentences(text):
        lower = [normalise(w) for w in words]
        for i, w in enumerate(words):
            lw = lower[i]
            if (i > 0 and w[0].isupper()) or not _plain(lw) or lw in exclude:
                continue
            pos = _lexicon(lw)
            if "VERB" in pos and not _is_noun(lower, i, False):
                out.setdefault(VERB_LINK + pos["VERB"][0], None)
    return list(out)


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
    query is matched against stored entities, so a word that names none finds nothing), then
    its walk links (`links`, kind ``link``) but those of a word it names as an entity (the walk
    already restarts there)."""
    first = {normalise(w) for words in sentences(query) for w in words[:1]}
    found = mentions(query, None, dates, {*known, *first})
    named = {m.name for m in found}
    return found + [Mention(n, LINK) for n in links(query, exclude=named)]


def message_mentions(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The mention rows `write_mentions.cypher` takes ({message_id, owner, name, kind}, one per
    message and entity, then one per message and walk link: `links`, kind ``link``, but those of
    its names), for ingest rows ({id, owner, speaker, text, event_starts, event_ends}). A word
    opening a sentence counts as a name when it is a speaker of the batch or is capitalised
    inside a sentence somewhere in the batch. Sorted by entity (owner, name):
    every batch locks the entities it links in that one order, so concurrent batches of an
    owner wait for each other instead of deadlocking."""
    known = inner_names(r["text"] for r in rows) | {normalise(r["speaker"]) for r in rows}
    out: list[dict[str, Any]] = []
    for r in rows:
        dates = list(zip(r.get("event_starts") or (), r.get("event_ends") or (), strict=True))
        found = mentions(r["text"], r["speaker"], dates, known)
        for m in found:
            out.append({"message_id": r["id"], "owner": r["owner"], "name": m.name,
                        "kind": m.kind})
        names = {m.name for m in found if m.kind in ("speaker", "name")}
        for n in links(r["text"], exclude=names):
            out.append({"message_id": r["id"], "owner": r["owner"], "name": n, "kind": LINK})
    return sorted(out, key=lambda x: (x["owner"], x["name"], x["message_id"]))
