"""How a skill is offered for a request. Pure, no LLM.

* Which writes a request asks for: a write tool's verb, or a plain English synonym of it, said in
  the request (`action_match`, `named`): "cancel my flights" asks for ``cancel_reservation``,
  not for ``update_reservation_flights``.
* The skill as a prompt gets it (`render`): steps with their typed slots, the checks before each
  write, support, what failed runs of its kind did differently, when to use it, and why it came
  up (`explain`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphmem.procedural.models import Recommendation, Skill, SkillStep

_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")


VERBS: dict[str, frozenset[str]] = {
    "update": frozenset({"update", "change", "modify", "edit", "move", "switch", "upgrade",
                         "downgrade", "adjust", "alter", "amend"}),
    "cancel": frozenset({"cancel", "refund", "void", "annul"}),
    "book": frozenset({"book", "reserve", "purchase", "buy"}),
    "create": frozenset({"create", "make", "new", "open", "add"}),
    "add": frozenset({"add", "include", "attach", "insert"}),
    "delete": frozenset({"delete", "remove", "drop", "erase"}),
    "remove": frozenset({"remove", "delete", "drop"}),
    "send": frozenset({"send", "issue", "give", "compensate", "compensation"}),
    "transfer": frozenset({"transfer", "escalate", "human", "representative"}),
}
"""Plain English verbs a request may use for a tool's first word (``update_...``: "change",
"modify"): general vocabulary, not learned from any data."""
_WORD = re.compile(r"[a-z]+")


def _stem(word: str) -> str:
    """Plural and third person off: "flights" -> "flight", "changes" -> "change"."""
    for end in ("ies", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            return word[: -len(end)] + ("y" if end == "ies" else "e" if end == "es" else "")
    return word


def _vocabulary(tool: str) -> tuple[set[str], set[str]]:
    """A tool's verbs (its first word and `VERBS`' synonyms) and its other words, stemmed."""
    parts = [_stem(w.lower()) for w in _SPLIT.split(tool) if w]
    if not parts:
        return set(), set()
    return ({_stem(v) for v in VERBS.get(parts[0], frozenset({parts[0]}))},
            {p for p in parts[1:] if len(p) > 2})


def named(request: str, steps: Sequence[SkillStep]) -> list[str]:
    """The request's words that name what a skill's writes do: a write tool's verb or a plain
    synonym of it (`VERBS`), or another word of its name ("cancel my flights" names
    ``cancel_reservation`` by "cancel"; ``update_reservation_flights`` by "flights")."""
    said = {w: _stem(w) for w in _WORD.findall(request.lower())}
    found: list[str] = []
    for s in steps:
        if s.writes:
            verbs, nouns = _vocabulary(s.tool)
            found += [w for w, stem in said.items() if stem in verbs or stem in nouns]
    return list(dict.fromkeys(found))


def action_match(request: str, steps: Sequence[SkillStep]) -> float:
    """How much of what a skill changes the request asks for, 0..1: the mean over its distinct
    writes of 1 when the request says the write's verb (or a plain synonym, `VERBS`) and
    another word of its name, 2/3 for the verb alone, 0 without the verb ("cancel my flights"
    asks for ``cancel_reservation``, not ``update_reservation_flights``). A skill that also
    changes what the request does not ask for scores lower: writes nobody asked for are not
    recommended on the strength of one word."""
    said = {_stem(w) for w in _WORD.findall(request.lower())}
    tools = list(dict.fromkeys(s.tool for s in steps if s.writes))
    if not tools:
        return 0.0
    total = 0.0
    for tool in tools:
        verbs, nouns = _vocabulary(tool)
        if said & verbs:
            total += 1.0 if said & nouns else 2 / 3
    return total / len(tools)


def _slots(step: SkillStep) -> str:
    return ", ".join(f"{k}: {v}" for k, v in step.slots.items()) or ", ".join(step.keys)


def render(skill: Skill, counter: int = 3) -> str:
    """A skill compactly, as a prompt gets it: its steps with their typed slots (``*`` changes
    state), the checks to make before each write, its support, what failed runs of its kind did
    differently (the ``counter`` most frequent, with counts; all are on the skill), when to use
    it, and, on a search, why it came up."""
    steps = " -> ".join(f"{s.tool}({_slots(s)}){'*' if s.writes else ''}"
                        for s in skill.steps) or "no tool call"
    lines = [f"steps: {steps} (* changes state; <slot>: a value of that type, from the request "
             "or an earlier step)"]
    checks: dict[str, list[str]] = {}
    for c in skill.preconditions:
        same = f" on the same {', '.join(c.same)}" if c.same else ""
        checks.setdefault(c.before, []).append(f"{c.read}{same} ({c.support} of {c.of})")
    lines += [f"before {w}: {'; '.join(found)}" for w, found in checks.items()]
    lines.append(f"succeeded in {skill.successes} case(s), failed in {skill.failures}: "
                 "evidence under the conditions seen, not a guarantee")
    if skill.counter_evidence:
        shown = [f"{c.count} of {c.of} {c.what}" for c in
                 sorted(skill.counter_evidence, key=lambda c: -c.count)[:counter]]
        rest = len(skill.counter_evidence) - len(shown)
        lines.append("failed runs of this kind: " + "; ".join(shown)
                     + (f" (and {rest} more)" if rest > 0 else ""))
    elif skill.pitfalls:
        lines.append("pitfalls: " + "; ".join(skill.pitfalls[:counter]))
    lines.append(f"when to use: {skill.when_to_use}")
    if skill.flagged:
        lines.append(f"flagged: {skill.flag_reason}")
    if skill.why is not None:
        lines.append("why: " + explain(skill.why))
    return "\n".join(lines)


def explain(why: Recommendation) -> str:
    """A recommendation in a line: the similarity, the words, the cases with their outcomes."""
    parts = []
    if why.similarity is not None:
        parts.append(f"similarity {why.similarity:.2f} to the requests it served")
    if why.words:
        parts.append("the request says " + ", ".join(f'"{w}"' for w in why.words))
    parts.append(f"{why.successes} successful and {why.failures} failed runs behind it")
    cases = [f'{c.outcome} "{c.intent[:60]}"'
             + (f" ({c.similarity:.2f})" if c.similarity is not None else "")
             for c in why.cases[:2]]
    if cases:
        parts.append("e.g. " + "; ".join(cases))
    return "; ".join(parts)
