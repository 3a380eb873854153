"""LongMemEval evidence-recall benchmark: for each question, is its gold evidence among the
messages a search returns, per message budget, method and question type.

What is scored depends on what the file gives (`graphmem.datasets.longmemeval`):

- official files: each question has its own haystack, ingested as its own owner; scored are the
  share of its answer sessions with at least one returned turn (``session_recall``), whether any /
  all of them were hit (``session_any`` / ``session_all``, LongMemEval's recall_any / recall_all)
  and the share of its ``has_answer`` turns returned (``turn_recall``);
- repackaged oracle files (the history is only the evidence sessions): every history of the
  files given is ingested into ONE owner, so each question's evidence sessions must be found
  among the other questions' sessions (a haystack made of the sample itself; easier than
  LongMemEval_S, whose distractors are ~50 sessions per question); session scores only.

Abstention questions (``_abs``) have no gold evidence: they are left out of recall, as in
LongMemEval's own retrieval evaluation, and counted apart (their histories still go into the
haystack). Search returns its best messages whatever the question; deciding that the memory
does not hold the answer is the reader's job. Everything written is deleted at the end.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, get_args

from graphmem.config import Settings
from graphmem.datasets import longmemeval
from graphmem.datasets.longmemeval import Item
from graphmem.models import MessageIn, Method, SearchRequest
from graphmem.progress import track
from graphmem.service import Memory

BUDGETS = (3, 5, 10, 20)
"""Messages returned. The sample haystack (~440 turns, 1-3 gold sessions a question) is found
whole by 10: smaller budgets are where methods differ."""
METHODS: tuple[str, ...] = ("rrf_expand", "iterative")
"""Scored when the installed graphmem has them (`graphmem.models.Method`)."""
BATCH = 100
POOLED_OWNER = "longmemeval"
SCORES = ("session_recall", "session_any", "session_all", "turn_recall")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Probe:
    owner: str
    item: Item


def available(methods: Sequence[str]) -> list[Method]:
    known = set(get_args(Method))
    return [cast(Method, m) for m in methods if m in known]


def plan(items: Sequence[Item]) -> tuple[dict[str, list[MessageIn]], list[Probe]]:
    """The messages per owner and the questions to score. Official items each get their own
    owner; repackaged ones share `POOLED_OWNER`, each history ingested once."""
    owners: dict[str, list[MessageIn]] = {}
    seen: set[tuple[str, str]] = set()
    probes = []
    for it in items:
        owner = it.history if it.layout == "official" else POOLED_OWNER
        if (owner, it.history) not in seen:
            seen.add((owner, it.history))
            owners.setdefault(owner, []).extend(it.messages(owner))
        probes.append(Probe(owner, it))
    return owners, probes


def scores(item: Item, returned: Sequence[str]) -> dict[str, float | None]:
    """The scores of one question for the message ids a search returned (None: not defined)."""
    history = f"{item.history}/"
    hit = {longmemeval.session_of(i) for i in returned if i.startswith(history)}
    gold = item.gold_sessions
    turns = item.gold_turns
    got = set(returned)
    return {
        "session_recall": sum(s in hit for s in gold) / len(gold) if gold else None,
        "session_any": float(any(s in hit for s in gold)) if gold else None,
        "session_all": float(all(s in hit for s in gold)) if gold else None,
        "turn_recall": sum(t in got for t in turns) / len(turns) if turns else None,
    }


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def run(mem: Memory, tenant: str, probes: Sequence[Probe], methods: Sequence[Method],
        budgets: Sequence[int]) -> dict[str, Any]:
    """Scores per method and budget, overall and per question type (abstention left out)."""
    scored = [p for p in probes if not p.item.abstention and p.item.gold != "unknown"]
    per: dict[str, dict[int, list[dict[str, float | None]]]] = {
        m: {b: [] for b in budgets} for m in methods}
    for p in track(scored, f"questions ({', '.join(methods)})"):
        for m in methods:
            for b in budgets:
                req = SearchRequest(query=p.item.question, owner=p.owner, method=m,
                                    max_messages=b)
                res = mem.for_tenant(tenant).search(req)
                per[m][b].append(scores(p.item, [h.id for h in res.hits]))
    types = sorted({p.item.question_type for p in scored})
    out: dict[str, Any] = {}
    for m in methods:
        out[m] = {"overall": {}, "by_type": {t: {} for t in types}}
        for b in budgets:
            rows = per[m][b]
            out[m]["overall"][str(b)] = {s: _mean([r[s] for r in rows]) for s in SCORES}
            for t in types:
                mine = [r for r, p in zip(rows, scored, strict=True) if p.item.question_type == t]
                out[m]["by_type"][t][str(b)] = {s: _mean([r[s] for r in mine]) for s in SCORES}
    return out


def report(out: dict[str, Any]) -> str:
    budgets = out["budgets"]
    lines = [
        f"LongMemEval evidence recall: {out['questions']['scored']} questions scored "
        f"({out['questions']['abstention']} abstention left out), {out['messages']} messages "
        f"in {out['owners']} owner(s), gold: {', '.join(out['gold'])}",
        "session recall (share of gold sessions with a returned turn) by message budget; "
        "all = every gold session hit",
    ]
    for m, r in out["methods"].items():
        lines.append(f"  {m:<12}" + "".join(
            f"  @{b}: {_fmt(r['overall'][str(b)]['session_recall'])} "
            f"(all {_fmt(r['overall'][str(b)]['session_all'])})" for b in budgets))
        for t, by in r["by_type"].items():
            n = out["questions"]["by_type"][t]
            lines.append(f"    {t + f' (n={n})':<34}" + "".join(
                f" {_fmt(by[str(b)]['session_recall'])}" for b in budgets))
        if r["overall"][str(budgets[0])]["turn_recall"] is not None:
            lines.append(f"    {'has_answer turn recall':<34}" + "".join(
                f" {_fmt(r['overall'][str(b)]['turn_recall'])}" for b in budgets))
    lines.append(f"ingest {out['ingest_s']:.1f} s, scoring {out['score_s']:.1f} s, "
                 f"total {out['duration_s']:.1f} s")
    return "\n".join(lines)


def _fmt(v: float | None) -> str:
    return "  -  " if v is None else f"{v:.3f}"


def main(settings: Settings, data: Sequence[Path], json_out: Path | None,
         methods: Sequence[str] = METHODS, budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """Run the benchmark over the files ``data`` (one haystack), print, write ``json_out``."""
    t_start = time.perf_counter()
    items = [it for path in data for it in longmemeval.load(path)]
    owners, probes = plan(items)
    chosen = available(methods)
    tenant = "bench-lme-" + secrets.token_hex(6)
    mem = Memory.open(settings)
    scored = [p for p in probes if not p.item.abstention and p.item.gold != "unknown"]
    out: dict[str, Any] = {
        "data": [{"path": str(p.resolve()), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
                 for p in data],
        "embedding_model": mem.embedder.name, "budgets": list(budgets),
        "methods_asked": list(methods), "methods_missing": [m for m in methods
                                                            if m not in chosen],
        "owners": len(owners), "messages": sum(len(m) for m in owners.values()),
        "gold": sorted({p.item.gold for p in probes}),
        "questions": {"total": len(probes), "scored": len(scored),
                      "abstention": sum(p.item.abstention for p in probes),
                      "unknown_gold": sum(p.item.gold == "unknown" for p in probes),
                      "by_type": {t: sum(p.item.question_type == t for p in scored)
                                  for t in sorted({p.item.question_type for p in scored})}},
    }
    try:
        t0 = time.perf_counter()
        for msgs in track(list(owners.values()), "ingesting histories"):
            batches = [msgs[i:i + BATCH] for i in range(0, len(msgs), BATCH)]
            for _ in mem.for_tenant(tenant).messages.ingest_many(batches):
                pass
        out["ingest_s"] = time.perf_counter() - t0
        _log(f"ingested {out['messages']} messages in {out['ingest_s']:.1f} s")
        t0 = time.perf_counter()
        out["methods"] = run(mem, tenant, probes, chosen, budgets)
        out["score_s"] = time.perf_counter() - t0
    finally:
        try:
            for owner in owners:
                mem.for_tenant(tenant).messages.forget_owner(owner)
        finally:
            mem.close()
    out["duration_s"] = time.perf_counter() - t_start
    print(report(out))
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out
