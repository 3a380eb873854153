"""From cases to skills, and from the skills known to what changes. Pure, no LLM.

A skill is a method: the successful cases that changed the same things (the same set of write
tools, `method_key`), whatever clusters their requests fall in; clusters (finer: one request
about one thing) decide which method a failed case counts against (`methods`).

Steps are the consensus of the successful cases: the medoid tool sequence (most in common with the
others, by LCS) keeps each step that a majority of them also took, in order, with the argument keys
they all passed. Failed cases give pitfalls. A skill is evidence under the conditions observed:
its support counts say how much, and new executions change them; a changed procedure is a new
version that supersedes the old one (history is kept, nothing is deleted).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.procedural.clustering import alignment, collapse
from graphmem.procedural.models import Action, SkillStep

MIN_SUCCESSES = 1
"""Successful cases a cluster needs before it yields a skill."""
RECENT = 3
_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")
"""Flag a skill when most of its last `RECENT` executions failed (the latest among them)."""


@dataclass(frozen=True)
class CaseView:
    """What skill formation reads of a case."""

    id: str
    intent: str
    actions: Sequence[Action]
    outcome: str
    occurred_at: datetime
    conditions: dict[str, object] = field(default_factory=dict)


def _collapsed(actions: Sequence[Action]) -> list[Action]:
    return [a for i, a in enumerate(actions) if i == 0 or actions[i - 1].tool != a.tool]


def consensus(sequences: Sequence[Sequence[Action]]) -> list[SkillStep]:
    """The ordered steps a majority of the (successful) sequences share; see the module doc."""
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
                                   support=len(aligned)))
    return steps


def pitfalls(steps: Sequence[SkillStep], failed: Sequence[Sequence[Action]]) -> list[str]:
    """What the failed cases did differently from the skill's steps, most frequent first."""
    if not failed:
        return []
    n = len(failed)
    wanted = {s.tool for s in steps if s.writes}
    extra: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    no_change = 0
    for actions in failed:
        written = {a.tool for a in actions if a.writes}
        extra.update(written - wanted)
        missing.update(wanted - written)
        no_change += not written
    out = [f"{c} of {n} failed runs called {t}, which the successful runs did not"
           for t, c in extra.most_common()]
    out += [f"{c} of {n} failed runs never called {t}" for t, c in missing.most_common()]
    if no_change and wanted:
        out.append(f"{no_change} of {n} failed runs changed nothing")
    if not out:
        out.append(f"{n} failed runs took the same write steps: the difference lies in the "
                   "arguments or the conversation, not in the tools called")
    return out


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
            min_successes: int = MIN_SUCCESSES) -> list[Method]:
    """The skills' evidence, a level above the clusters: successful cases grouped by their method
    (`method_key`), so requests of one kind about different things share a skill. A failed case
    counts against the method that succeeded most for requests of its cluster (the same request
    done right), else against its own method; a failed case with neither stays unlinked."""
    good: dict[str, list[str]] = {}
    for c in sorted(cases, key=lambda c: c.id):
        if c.outcome == "success":
            good.setdefault(method_key(c.actions), []).append(c.id)
    keep = {k: v for k, v in good.items() if len(v) >= min_successes}
    key_of = {i: k for k, ids in keep.items() for i in ids}
    in_cluster: dict[str, Counter[str]] = {}
    for i, k in key_of.items():
        in_cluster.setdefault(cluster_of.get(i, i), Counter())[k] += 1
    against: dict[str, list[str]] = {k: [] for k in keep}
    for c in sorted(cases, key=lambda c: c.id):
        if c.outcome not in ("failure", "partial"):
            continue
        votes = in_cluster.get(cluster_of.get(c.id, c.id))
        if votes:
            target = min(votes, key=lambda k: (-votes[k], -len(keep[k]), k))
        else:
            target = method_key(c.actions)
        if target in against:
            against[target].append(c.id)
    return [Method(k, keep[k], against[k])
            for k in sorted(keep, key=lambda k: (-len(keep[k]), k))]
