"""The deciders of iterative retrieval (`graphmem.retrieval.iterative`): which candidates to keep,
which follow-up queries to issue, whether the evidence is sufficient.

- `OfflineDecider`: no model, no network, microseconds. Follow-ups, for every question, or with
  ``lists_only`` only for those that ask for several things (a plural, "both", "all", several
  people; on rounds of `rrf_expand` a single-answer question lost more to the follow-ups' hits
  than it gained; on the turn windows every question gains a little): a
  question joining several people ("Joanna and Nate") is split into one question per person;
  pseudo-relevance feedback (the names and rare words of the best hits that the question lacks,
  added to the question); with ``time_follow_up`` (off: it cost temporal questions 0.1 at 5
  messages on LoCoMo dev), for a "when" question the best hit's month and year added to the
  question (the time list then favours that time). Keeps the best hits of each query that
  name the question's people and cover most of its content words; sufficient when the best
  hit covers them all and scores well clear of the last one in budget.
- `LLMDecider`: any OpenAI-compatible model through `graphmem.llm.client.LLMClient` (operation
  ``decide``, accounted in the usage ledger); the prompt is `graphmem.retrieval.prompts_decide`.
  A reply that stays malformed after the client's retries raises `DeciderFailed` (the loop then
  falls back to the first candidates).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

from graphmem.llm.client import LLMClient, LLMError
from graphmem.retrieval import prompts_decide
from graphmem.retrieval.iterative import Candidate, DeciderFailed, Decision, Key, View

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+")
_STOP_WORDS = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each ever few for from
further get got had has have having he her here hers herself him himself his how i if in into is
it its itself just kind like likely made make many me might more most much my myself no nor not
now of off often on once one only or other our ours out over own per really recently same she
should so some such than that the their theirs them themselves then there these they this those
through to too type under until up us very was way we were what when where which while who whom
why will with would you your yours yourself think thing things time times go went going feel
felt say said tell told s t thanks thank great cool awesome yeah wow nice glad sounds amazing hey
hi congrats sure totally lol haha okay yes"""
STOP = frozenset(_STOP_WORDS.split())
Query = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
WH = frozenset({"what", "when", "where", "which", "who", "whom", "whose", "why", "how"})
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
_PLURAL_ASK = re.compile(
    r"^\s*(what|which)\s+(\w+\s+){0,2}\w+s\s+(do|does|did|has|have|had|are|were)\b"
    r"|^\s*(what|who)\s+(are|were)\b"
    r"|\b(both|all|every|ways|things|activities|hobbies|types|kinds|places|items)\b", re.I)
"""A question that asks for several things: "What video games does Nate play?", "What are
Joanna's hobbies?", "What do both ... ?"."""


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def stem(word: str) -> str:
    """A crude stem: lower case, the first 5 letters (enough to match plural and tense)."""
    w = word.casefold().removesuffix("'s")
    return w[:5] if len(w) > 5 else w


def names(text: str) -> list[str]:
    """Capitalised words that are not stop words (people, places, titles), in order, once
    each."""
    out = (w.removesuffix("'s") for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", text))
    return list(dict.fromkeys(w for w in out if w[:1].isupper() and w.casefold() not in STOP))


def content(text: str) -> list[str]:
    """The non-stop words of ``text`` (lower case, in order, once each)."""
    return list(dict.fromkeys(w.casefold().removesuffix("'s") for w in words(text)
                              if w.casefold() not in STOP and len(w) > 2))


def coverage(question_terms: Sequence[str], text: str) -> float:
    """The share of ``question_terms`` (by `stem`) found in ``text``."""
    if not question_terms:
        return 0.0
    have = {stem(w) for w in words(text)}
    return sum(stem(t) in have for t in question_terms) / len(question_terms)


def statement(question: str) -> str:
    """The question without its question words: "What did John's team win at the end of the
    season?" -> "John's team win at the end of the season"."""
    tokens = question.strip().rstrip("?").split()
    while tokens and tokens[0].casefold().strip(",") in (WH | {"did", "do", "does", "is", "are",
                                                                "was", "were", "has", "have",
                                                                "can", "could", "would"}):
        tokens.pop(0)
    return " ".join(tokens)


def split_people(question: str, people: Sequence[str]) -> list[str]:
    """One question per person when the question joins several ("Joanna and Nate")."""
    joined = re.search(r"\b([A-Z][\w'\-]*)\s*(?:,\s*[A-Z][\w'\-]*\s*)*(?:,\s*)?(?:and|&)\s+"
                       r"([A-Z][\w'\-]*)", question)
    if joined is None or len(people) < 2:
        return []
    span = joined.group(0)
    members = [p for p in people if re.search(rf"\b{re.escape(p)}\b", span)]
    return [question.replace(span, p) for p in members][:4] if len(members) >= 2 else []


class OfflineDecider:
    """Heuristic decisions without a model (see the module docstring)."""

    name = "offline"

    def __init__(self, feedback_depth: int = 3, feedback_terms: int = 4,
                 keep_coverage: float = 0.75, keep_depth: int = 2,
                 sufficient_gap: float = 1.5, time_follow_up: bool = False,
                 lists_only: bool = True) -> None:
        self.feedback_depth = feedback_depth
        self.feedback_terms = feedback_terms
        self.keep_coverage = keep_coverage
        self.keep_depth = keep_depth
        self.sufficient_gap = sufficient_gap
        self.time_follow_up = time_follow_up
        self.lists_only = lists_only

    def decide(self, view: View) -> Decision:
        q = view.question
        people = names(q)
        terms = content(q)
        keep: list[Key] = []
        reasons: dict[Key, str] = {}
        dropped: dict[Key, str] = {}
        for query, cands in view.latest.items():
            for c in [c for c in cands if "neighbour" not in c.lists or len(c.lists) > 1][
                    : self.keep_depth]:
                text = f"{c.speaker}: {c.text}"
                cov = coverage(terms, text)
                who = all(stem(p) in {stem(w) for w in words(text)} for p in people) or not people
                if cov >= self.keep_coverage and who and len(keep) < view.core_room:
                    keep.append(c.key)
                    reasons[c.key] = f"covers {cov:.0%} of the question's words ({query!r})"
                else:
                    dropped[c.key] = f"covers {cov:.0%} of the question's words"
        queries: list[str] = []
        plural = bool(_PLURAL_ASK.search(q)) or len(split_people(q, people)) > 1
        if view.round == 1 and (plural or not self.lists_only):
            queries = self._follow_ups(q, people, terms, view.latest.get(q, ()))
        best = view.pool[0] if view.pool else None
        sufficient = False
        note = ""
        if best is not None and not plural and len(view.pool) > 1:
            tail = view.pool[min(len(view.pool), view.budget.items or 10) - 1].score
            cov = coverage(terms, f"{best.candidate.speaker}: {best.candidate.text}")
            if cov >= 0.99 and tail > 0 and best.score / tail >= self.sufficient_gap:
                sufficient = True
                note = f"the best hit covers the question and scores {best.score / tail:.1f}x " \
                       "the last one in budget"
        return Decision(tuple(keep), tuple(queries[: view.max_queries]), sufficient, reasons,
                        dropped, note)

    def _follow_ups(self, q: str, people: Sequence[str], terms: Sequence[str],
                    hits: Sequence[Candidate]) -> list[str]:
        out: list[str] = []
        out.extend(split_people(q, people))
        extra = self.feedback(q, hits)
        if extra:
            out.append(" ".join([statement(q), *extra]))
        nuclei = [c for c in hits if "neighbour" not in c.lists or len(c.lists) > 1]
        if self.time_follow_up and re.match(r"\s*(when|what (year|month|date|day|time))\b",
                                            q, re.I) and nuclei:
            ts = nuclei[0].timestamp
            if ts is not None:
                out.append(f"{statement(q)} in {MONTHS[ts.month - 1]} {ts.year}")
        return out

    def feedback(self, q: str, hits: Sequence[Candidate]) -> list[str]:
        """Pseudo-relevance feedback: the words of the best hits (nuclei) that the question
        lacks and that are rare among all the hits (the speakers and the small talk of the
        conversation are everywhere), names first."""
        nuclei = [c for c in hits if "neighbour" not in c.lists or len(c.lists) > 1]
        top = nuclei[: self.feedback_depth]
        known = {stem(w) for w in words(q)}
        speakers = {stem(c.speaker) for c in hits}
        df: Counter[str] = Counter()
        for c in hits:
            df.update({stem(w) for w in words(c.text)})
        limit = max(2, len(hits) // 10)
        scored: dict[str, float] = {}
        for rank, c in enumerate(top):
            found = [*((n, 2.0) for n in names(c.text)), *((w, 1.0) for w in content(c.text))]
            for w, weight in found:
                st = stem(w)
                if (st in known or st in speakers or w.casefold() in STOP or len(w) < 4
                        or df[st] > limit):
                    continue
                scored[w.casefold()] = max(scored.get(w.casefold(), 0.0),
                                           weight / (1 + rank) / df[st])
        return sorted(scored, key=lambda w: -scored[w])[: self.feedback_terms]


class LLMDecider:
    """Decisions by a model (see the module docstring): it sees the question, the queries so
    far, the core and the best candidates as ``c1`` .. ``cN``, and replies with JSON."""

    name = "llm"

    def __init__(self, client: LLMClient, shown: int = 12) -> None:
        self.client = client
        self.shown = shown

    def decide(self, view: View) -> Decision:
        core = set(view.core)
        shown = [f.candidate for f in view.pool if f.key not in core][: self.shown]
        kept = [f.candidate for f in view.pool if f.key in core]
        alias = {f"c{n}": c.key for n, c in enumerate(shown, 1)}
        reply_model = reply_schema(list(alias), view.max_queries)
        messages = prompts_decide.decide_messages(view.question, view.issued, kept, shown,
                                                  view.max_queries, view.core_room)
        try:
            reply = self.client.complete_structured(
                "decide", messages, reply_model, prompts_decide.json_schema(list(alias),
                                                                           view.max_queries))
        except LLMError as exc:
            raise DeciderFailed(str(exc)) from exc
        keep = tuple(alias[i] for i in dict.fromkeys(reply.keep))  # type: ignore[attr-defined]
        dropped = {k: "not kept by the model" for a, k in alias.items() if k not in keep}
        return Decision(keep, tuple(reply.queries), bool(reply.sufficient),  # type: ignore[attr-defined]
                        {k: "kept by the model" for k in keep}, dropped)


class DecideReply(BaseModel):
    """The model's reply, as the prompt asks for it (ids and count checked per call)."""

    model_config = ConfigDict(extra="ignore")

    keep: list[str] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)
    sufficient: bool = False


def reply_schema(ids: Sequence[str], max_queries: int) -> type[BaseModel]:
    """`DecideReply` tightened to one call: ``keep`` only among ``ids``, at most ``max_queries``
    non-empty queries (a reply outside it is malformed: retried with a correction)."""
    Id: Any = Literal[tuple(ids)] if ids else Literal["none"]
    model: type[BaseModel] = create_model(
        "DecideReply", __base__=DecideReply,
        keep=(list[Id], Field(default_factory=list)),
        queries=(list[Query], Field(default_factory=list, max_length=max_queries)),
    )
    return model


__all__ = ["DecideReply", "LLMDecider", "OfflineDecider", "reply_schema"]
