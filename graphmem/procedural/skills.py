"""From cases to skills, and from the skills known to what changes. Pure, no LLM.

A skill is a method: the successful cases that changed the same things (the same set of write
tools, `method_key`), whoever they served and whatever clusters they fall in; clusters (by
procedure, then by masked request) decide which method a failed case counts against
(`methods`).

Steps are the consensus of the successful cases: the medoid tool sequence (most in common with the
others, by LCS) keeps each step that a majority of them also took, in order, with the argument keys
and typed slots they all passed. Preconditions are the reads most of them made before each write
(`preconditions`); the failed cases give counter-evidence, every difference counted
(`counter_evidence`). A skill is evidence under the conditions observed: its support counts say
how much, and new executions change them; a changed procedure is a new version that supersedes
the old one (history is kept, nothing is deleted).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.procedural.clustering import alignment, collapse
from graphmem.procedural.models import (
    Action,
    CounterEvidence,
    Precondition,
    SkillStep,
)

MIN_SUCCESSES = 1
"""Successful cases a cluster needs before it yields a skill."""
RECENT = 3
_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")
"""Flag a skill when most of its last `RECENT` executions failed (the latest among them)."""


@dataclass(frozen=True)
class CaseView:
    """What skill formation reads of a case (its intent with identifiers masked: what a skill
    shows of it, to any customer)."""

    id: str
    intent: str
    actions: Sequence[Action]
    outcome: str
    occurred_at: datetime
    conditions: dict[str, object] = field(default_factory=dict)


def _collapsed(actions: Sequence[Action]) -> list[Action]:
    return [a for i, a in enumerate(actions) if i == 0 or actions[i - 1].tool != a.tool]


def consensus(sequences: Sequence[Sequence[Action]]) -> list[SkillStep]:
    """The ordered steps a majority of the (successful) sequences share, each with the argument
    keys and typed slots all its aligned calls passed; see the module doc."""
    seqs = [_collapsed(s) for s in sequences]
    seqs = [s for s in seqs if s] or seqs
    if not seqs or not any(seqs):
        return []
    tools = [[a.tool for a in s] for s in seqs]
    overlap = [sum(len(alignment(t, u)) for u in tools) for t in tools]
    centre = max(range(len(seqs)), key=lambda i: (overlap[i], -len(tools[i]), -i))
    need = len(seqs) // 2 + 1
    steps = []
    maps = [alignment(tools[centre], t) for t in tools]
    for pos, action in enumerate(seqs[centre]):
        aligned = [seqs[k][m[pos]] for k, m in enumerate(maps) if pos in m]
        if len(aligned) >= need:
            keys = set(aligned[0].keys).intersection(*(set(a.keys) for a in aligned[1:]))
            steps.append(SkillStep(tool=action.tool, keys=sorted(keys), writes=action.writes,
                                   support=len(aligned),
                                   slots=merge_slots([a.slots for a in aligned])))
    return steps


def merge_slots(found: Sequence[dict[str, str]]) -> dict[str, str]:
    """The slots every one of several calls passed, with the type the first gave."""
    if not found:
        return {}
    common = set(found[0]).intersection(*(set(f) for f in found[1:]))
    return {k: found[0][k] for k in sorted(common)}


def preconditions(steps: Sequence[SkillStep],
                  good: Sequence[Sequence[Action]]) -> list[Precondition]:
    """For each write of the skill, the reads a majority of the successful cases that made it
    made before it (first call), with the slots most of them checked on the same value; in the
    order of the skill's writes, then by support."""
    out: list[Precondition] = []
    for tool in dict.fromkeys(s.tool for s in steps if s.writes):
        made = [m for m in (_before(actions, tool) for actions in good) if m is not None]
        reads: Counter[str] = Counter()
        same: dict[str, Counter[str]] = {}
        for earlier, checked in made:
            reads.update(earlier)
            for c in checked:
                r, _, kind = c.partition(":")
                same.setdefault(r, Counter())[kind] += 1
        for read, n in sorted(reads.items(), key=lambda kv: (-kv[1], kv[0])):
            if n * 2 > len(made):
                kinds = same.get(read, Counter())
                out.append(Precondition(
                    before=tool, read=read, support=n, of=len(made),
                    same=sorted(k for k, m in kinds.items() if m * 2 > len(made))))
    return out


def _before(actions: Sequence[Action], tool: str) -> tuple[set[str], list[str]] | None:
    """The reads made before the first call of ``tool`` and that call's checks; None if the
    case never called it."""
    reads: set[str] = set()
    for a in actions:
        if a.tool == tool and a.writes:
            return reads, list(a.checked)
        if not a.writes:
            reads.add(a.tool)
    return None


MAX_CASES_SHOWN = 20
"""Case ids listed with one piece of counter-evidence (its count is exact)."""
_ORDER = ("extra_write", "missing_write", "no_change", "skipped_check", "other_slots",
          "repeated_write", "same_steps")


def counter_evidence(steps: Sequence[SkillStep], checks: Sequence[Precondition],
                     good: Sequence[Sequence[Action]],
                     bad: Sequence[tuple[str, Sequence[Action]]]) -> list[CounterEvidence]:
    """What the failed cases (id, actions) against a skill did differently from its
    successful ones, each difference with how many did it and which: writes the skill does
    not make, writes it makes that they never made, no change at all, a precondition skipped
    (the write made without the read before it), a write's slot left out, a write repeated
    more often than any successful case did; a failed case with none of these took the same
    steps (the difference lies in the values or the conversation). Nothing is dropped:
    grouped by kind (in that order), the most frequent first."""
    n = len(bad)
    wanted = [s.tool for s in steps if s.writes]
    slots_of = {s.tool: s.slots for s in steps if s.writes}
    most = {t: max((sum(a.tool == t for a in g) for g in good), default=1) for t in wanted}
    found: dict[tuple[str, str], list[str]] = {}

    def note(kind: str, what: str, case: str) -> None:
        found.setdefault((kind, what), []).append(case)

    for case, actions in bad:
        written = [a for a in actions if a.writes]
        tools = {a.tool for a in written}
        before = len(found), sum(len(v) for v in found.values())
        for t in sorted(tools - set(wanted)):
            note("extra_write", f"called {t}, which the successful runs did not", case)
        for t in dict.fromkeys(wanted):
            if t not in tools:
                note("missing_write", f"never called {t}", case)
        if not written and wanted:
            note("no_change", "changed nothing", case)
        for c in checks:
            made = _before(actions, c.before)
            if made is not None and c.read not in made[0]:
                note("skipped_check", f"called {c.before} without calling {c.read} before it",
                     case)
        for a in written:
            for slot in sorted(set(slots_of.get(a.tool, {})) - set(a.slots)):
                note("other_slots", f"called {a.tool} without {slot}", case)
        for t, top in most.items():
            if sum(a.tool == t for a in written) > top:
                note("repeated_write", f"called {t} more often than any successful run "
                     f"({top} time(s))", case)
        if (len(found), sum(len(v) for v in found.values())) == before:
            note("same_steps", "took the same write steps as the successful runs: the "
                 "difference lies in the values passed or the conversation", case)
    out = [CounterEvidence(what=what, kind=kind,  # type: ignore[arg-type]
                           count=len(set(cases)), of=n,
                           cases=sorted(set(cases))[:MAX_CASES_SHOWN])
           for (kind, what), cases in found.items()]
    return sorted(out, key=lambda c: (_ORDER.index(c.kind), -c.count, c.what))


def pitfalls(steps: Sequence[SkillStep], failed: Sequence[Sequence[Action]],
             checks: Sequence[Precondition] = (),
             good: Sequence[Sequence[Action]] = ()) -> list[str]:
    """The counter-evidence as sentences ("1 of 2 failed runs called book_x, which the
    successful runs did not"), in `counter_evidence`'s order."""
    found = counter_evidence(steps, checks, good, [(str(i), a) for i, a in enumerate(failed)])
    return [f"{c.count} of {c.of} failed runs {c.what}" for c in found]


def name_of(steps: Sequence[SkillStep]) -> str:
    writes = [s.tool for s in steps if s.writes]
    if writes:
        return " then ".join(dict.fromkeys(writes))
    reads = list(dict.fromkeys(s.tool for s in steps))
    return "answer without changes" + (f" ({', '.join(reads[:3])})" if reads else "")


def path(steps: Sequence[SkillStep], keys: bool = False) -> str:
    """The steps in order, ``*`` after a step that changes state; with ``keys``, each tool with
    the argument keys that matter: ``get_order(order_id) -> cancel_order(order_id)*``."""
    return " -> ".join(s.tool + (f"({', '.join(s.keys)})" if keys else "")
                       + ("*" if s.writes else "") for s in steps) or "no tool call"


def describe(steps: Sequence[SkillStep], successes: int, failures: int) -> str:
    return (f"{path(steps)} (* changes state). Seen to succeed in {successes} case(s), to fail in "
            f"{failures}: evidence under the conditions observed, not a guarantee.")


def when_to_use(intents: Sequence[str], limit: int = 3) -> str:
    shown = [f'"{i[:160]}"' for i in dict.fromkeys(i for i in intents if i)][:limit]
    return "Requests like " + "; ".join(shown) if shown else "No request text was recorded"


def signature(steps: Sequence[SkillStep]) -> list[str]:
    """What makes two versions the same procedure: tools, their keys, writes."""
    return [f"{s.tool}({','.join(s.keys)}){'!' if s.writes else ''}" for s in steps]


def change_reason(old: Sequence[str], new: Sequence[str]) -> str:
    added = [s for s in new if s not in old]
    dropped = [s for s in old if s not in new]
    parts = []
    if added:
        parts.append("added " + ", ".join(added))
    if dropped:
        parts.append("dropped " + ", ".join(dropped))
    if not parts:
        parts.append("reordered steps")
    return "steps changed: " + "; ".join(parts)


def flag(cases: Sequence[CaseView], recent: int = RECENT) -> str | None:
    """Why a skill should be looked at, or None: most of its last executions failed."""
    known = sorted((c for c in cases if c.outcome in ("success", "failure", "partial")),
                   key=lambda c: (c.occurred_at, c.id))[-recent:]
    failed = [c for c in known if c.outcome != "success"]
    if len(known) >= 2 and len(failed) * 2 > len(known) and known[-1].outcome != "success":
        return (f"{len(failed)} of the last {len(known)} executions failed (latest "
                f"{known[-1].occurred_at.isoformat()})")
    return None


def lineage_id(owner: str, seed_case: str) -> str:
    return "sk-" + hashlib.sha256(f"{owner}\x1f{seed_case}".encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Known:
    """A current skill version as stored."""

    id: str
    lineage: str
    version: int
    signature: list[str]
    cases: frozenset[str]


@dataclass(frozen=True)
class Match:
    known: Known | None
    overlap: int


def match(clusters: Sequence[frozenset[str]], known: Sequence[Known]) -> list[Match]:
    """Each cluster's current skill: the one sharing most cases with it (each skill goes to at
    most one cluster, the best overlaps first). No shared case: a new skill."""
    pairs = sorted(((len(c & k.cases), i, j) for i, c in enumerate(clusters)
                    for j, k in enumerate(known) if c & k.cases), reverse=True)
    taken_c: dict[int, Match] = {}
    taken_k: set[int] = set()
    for overlap, i, j in pairs:
        if i not in taken_c and j not in taken_k:
            taken_c[i] = Match(known[j], overlap)
            taken_k.add(j)
    return [taken_c.get(i, Match(None, 0)) for i in range(len(clusters))]


def conditions_of(cases: Sequence[CaseView]) -> dict[str, list[str]]:
    """The conditions the successful cases ran under: each key with the values seen."""
    out: dict[str, set[str]] = {}
    for c in cases:
        for k, v in c.conditions.items():
            out.setdefault(k, set()).add(str(v))
    return {k: sorted(v)[:20] for k, v in sorted(out.items())}


def collapsed_tools(actions: Sequence[Action]) -> list[str]:
    return collapse([a.tool for a in actions])


def method_key(actions: Sequence[Action]) -> str:
    """What a skill is: the set of tools that changed state (sorted, comma-joined; '' for a run
    that changed nothing). Read steps, their order and the identifiers vary from run to run."""
    return ",".join(sorted({a.tool for a in actions if a.writes}))


def spoken(tool: str) -> str:
    """A tool name as words, for fulltext search: ``update_reservation_flights`` -> ``update
    reservation flights``."""
    return " ".join(w for w in _SPLIT.split(tool) if w)


@dataclass(frozen=True)
class Method:
    """One skill to be: the successful cases of one method and the failed cases against it."""

    key: str
    supporting: list[str]
    contradicting: list[str]


def methods(cases: Sequence[CaseView], cluster_of: dict[str, str],
            min_successes: int = MIN_SUCCESSES,
            asked_of: dict[str, str] | None = None) -> list[Method]:
    """The skills' evidence, a level above the clusters: successful cases grouped by their method
    (`method_key`), so requests of one kind about different things share a skill. A failed case
    counts against the method that succeeded most in its cluster (``cluster_of``: by
    procedure), else in its cluster of requests (``asked_of``: the same request done right),
    else against its own method; a failed case with none of these stays unlinked."""
    good: dict[str, list[str]] = {}
    for c in sorted(cases, key=lambda c: c.id):
        if c.outcome == "success":
            good.setdefault(method_key(c.actions), []).append(c.id)
    keep = {k: v for k, v in good.items() if len(v) >= min_successes}
    key_of = {i: k for k, ids in keep.items() for i in ids}
    levels = [cluster_of, asked_of or {}]
    votes_in: list[dict[str, Counter[str]]] = [{}, {}]
    for level, found in zip(levels, votes_in, strict=True):
        for i, k in key_of.items():
            found.setdefault(level.get(i, i), Counter())[k] += 1
    against: dict[str, list[str]] = {k: [] for k in keep}
    for c in sorted(cases, key=lambda c: c.id):
        if c.outcome not in ("failure", "partial"):
            continue
        target = method_key(c.actions)
        for level, found in zip(levels, votes_in, strict=True):
            votes = found.get(level.get(c.id, c.id))
            if votes:
                target = min(votes, key=lambda k: (-votes[k], -len(keep[k]), k))
                break
        if target in against:
            against[target].append(c.id)
    return [Method(k, keep[k], against[k])
            for k in sorted(keep, key=lambda k: (-len(keep[k]), k))]
