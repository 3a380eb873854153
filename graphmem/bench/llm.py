"""`graphmem bench llm`: what the LLM path gives, on one LoCoMo conversation, against the local
model (started here and stopped after when it was not running; or any endpoint the
``GRAPHMEM_LLM_*`` settings name).

The whole conversation is ingested into a throwaway tenant; its first ``sessions`` sessions are
formed by the LLM (boundaries, narratives, extraction), the others without it (extractive
episodes and turn windows: what recall needs). Then:

- extraction: recall and precision of the extracted observations against LoCoMo's gold
  ``observation`` lists of those sessions. A pair matches when the cosine similarity of their
  texts (the configured embedder) is at least ``MATCH_SIMILARITY`` and the fact's source
  messages share a dia_id with the gold evidence. Matching is many-to-many (a fact may cover
  two gold lines). Also: the share of facts whose cited message really supports them (the gold
  evidence of the most similar gold line, if similar enough, is among the fact's sources).
- narratives: cosine of the mean narrative vector of a session's episodes to its gold
  ``session_summary``, for LLM and extractive episodes; and whether an episode of a session
  with gold events spans the date `event_summary` gives.
- answers: `Memory.answer` on the first ``questions`` questions (categories 1-4) of the
  conversation: normalised exact match and token F1 >= 0.5 against the short gold answer,
  the gold evidence among the context's messages and among the cited sources.
- decider: evidence recall @10 of method ``iterative`` with the LLM decider and with the offline
  one, on the first ``decider_questions`` questions (the same order; more or fewer than the
  answered ones: a decider call costs about half an answer's).
- cost: tokens per operation (`Memory.llm_usage`) and wall time per stage.

Everything it wrote is deleted at the end (the tenant's usage rows stay, they are small).
"""

from __future__ import annotations

import json
import re
import secrets
import string
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from graphmem.bench.locomo import gold_evidence
from graphmem.bench.units import evidence_recall
from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.llm import local_server
from graphmem.models import AnswerRequest, MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store.episodes import EpisodeStore

MATCH_SIMILARITY = 0.6
"""An extracted fact and a gold observation are the same statement at this cosine or above
(chosen, not tuned; the JSON also gives 0.5 and 0.7, and examples with their similarity)."""
SWEEP = (0.5, 0.6, 0.7)
CATEGORIES = (1, 2, 3, 4)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
T = TypeVar("T")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _timed(out: dict[str, float], name: str, fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    _log(f"[bench llm] {name} ...")
    try:
        return fn()
    finally:
        out[name] = round(time.perf_counter() - start, 1)
        _log(f"[bench llm] {name}: {out[name]} s")


# --- answers --------------------------------------------------------------------------------

def normalise(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def one_date(text: str) -> date | None:
    """The calendar day a short answer names ("7 May 2023", "2023-05-07"), None unless it names
    exactly one full date (day, month and year)."""
    import dateparser  # type: ignore[import-untyped]

    text = text.strip()
    if not text or len(text) > 40 or not re.search(r"\b\d{4}\b", text):  # a year, not "ago"
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    parsed = dateparser.parse(text, languages=["en"], settings={
        "STRICT_PARSING": True, "REQUIRE_PARTS": ["day", "month", "year"]})
    return parsed.date() if parsed is not None else None


def same_date(prediction: str, gold: str) -> bool:
    """Both name the same full date, however written ("2023-07-02" and "2 July 2023")."""
    day = one_date(gold)
    return day is not None and one_date(prediction) == day


def token_f1(prediction: str, gold: str) -> float:
    p, g = normalise(prediction).split(), normalise(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if not p or not g or common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class Question:
    query: str
    answer: str
    category: int
    gold: tuple[str, ...]


def questions_of(conv: locomo.Conversation, limit: int) -> list[Question]:
    valid = {locomo.dia_id(m.id) for m in conv.messages if m.id}
    out = []
    for q in conv.questions:
        gold = gold_evidence(q.evidence, valid)
        if q.category in CATEGORIES and gold:
            out.append(Question(q.question, q.answer, q.category, gold))
    return out[:limit]


def correct(row: dict[str, Any]) -> bool:
    """The judge without a model: the same words, the same calendar day, or token F1 >= 0.5."""
    return bool(row["exact"] or row.get("same_date") or row["f1"] >= 0.5)


def score_answers(mem: Memory, tenant: str, who: str, qs: Sequence[Question],
                  as_of: datetime, context_tokens: int | None = None) -> dict[str, Any]:
    """``context_tokens``: the requests' ``max_tokens`` (None: the API's default)."""
    rows: list[dict[str, Any]] = []
    default: int = AnswerRequest.model_fields["max_tokens"].default
    budget = context_tokens or default
    for n, q in enumerate(qs, 1):
        started = time.perf_counter()
        res = mem.for_tenant(tenant).answer(AnswerRequest(query=q.query, owner=who, as_of=as_of,
                                                          max_tokens=budget))
        context_messages = [i.id for i in res.context.items if i.unit == "message"]
        rows.append({
            "question": q.query, "category": q.category, "gold": q.answer,
            "answer": res.answer, "insufficient": res.insufficient,
            "exact": normalise(res.answer) == normalise(q.answer),
            "same_date": same_date(res.answer, q.answer),
            "f1": round(token_f1(res.answer, q.answer), 3),
            "context_recall": evidence_recall(q.gold, context_messages),
            "cited_recall": evidence_recall(q.gold, res.sources),
            "citations": len(res.citations), "invented": len(res.invented_citations),
            "seconds": round(time.perf_counter() - started, 1)})
        r = rows[-1]
        _log(f"  answered {n}/{len(qs)}: {'correct' if correct(r) else 'wrong'}, f1 {r['f1']}, "
             f"category {q.category}, evidence in context {r['context_recall']} "
             f"({r['seconds']} s)")
    n = max(len(rows), 1)
    right = [correct(r) for r in rows]
    by_cat: dict[str, list[bool]] = {}
    for r, ok in zip(rows, right, strict=True):
        by_cat.setdefault(str(r["category"]), []).append(ok)
    return {
        "questions": len(rows), "context_max_tokens": budget, "correct": sum(right) / n,
        "exact_match": sum(r["exact"] for r in rows) / n,
        "mean_f1": sum(r["f1"] for r in rows) / n,
        "insufficient": sum(r["insufficient"] for r in rows) / n,
        "context_evidence_recall": sum(r["context_recall"] for r in rows) / n,
        "cited_evidence_recall": sum(r["cited_recall"] for r in rows) / n,
        "invented_citations": sum(r["invented"] for r in rows),
        "correct_by_category": {c: {"n": len(v), "correct": sum(v) / len(v)}
                                for c, v in sorted(by_cat.items())},
        "rows": rows}


# --- extraction and narratives ----------------------------------------------------------------

def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = sum(x * x for x in a) ** 0.5, sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def gold_observations(item: dict[str, Any], sessions: Sequence[int]) -> list[tuple[str, set[str]]]:
    """(text, dia_ids) of the gold observations of the sessions."""
    out = []
    for n in sessions:
        for lines in item["observation"].get(f"session_{n}_observation", {}).values():
            for text, evidence in lines:
                ids = evidence if isinstance(evidence, list) else [evidence]
                out.append((str(text), {p.strip() for e in ids for p in str(e).split(";")}))
    return out


def score_extraction(mem: Memory, tenant: str, who: str,
                     gold: list[tuple[str, set[str]]]) -> dict[str, Any]:
    facts = [f for f in mem.for_tenant(tenant).facts.query(who, include_history=True)
             if f.content]
    if not facts or not gold:
        return {"facts": len(facts), "gold": len(gold), "recall": 0.0, "precision": 0.0}
    fv = mem.embedder.embed([f.content or "" for f in facts])
    gv = mem.embedder.embed([g[0] for g in gold])
    sim = [[_cos(a, b) for b in gv] for a in fv]
    cited = [{locomo.dia_id(s) for s in f.sources} for f in facts]

    def pr(threshold: float) -> tuple[float, float]:
        match = [[sim[i][j] >= threshold and bool(cited[i] & gold[j][1])
                  for j in range(len(gold))] for i in range(len(facts))]
        found = sum(any(match[i][j] for i in range(len(facts))) for j in range(len(gold)))
        return sum(any(r) for r in match) / len(facts), found / len(gold)

    precision, recall = pr(MATCH_SIMILARITY)
    best = [max(range(len(gold)), key=row.__getitem__) for row in sim]
    similar = [i for i in range(len(facts)) if sim[i][best[i]] >= MATCH_SIMILARITY]
    supported = [i for i in similar if cited[i] & gold[best[i]][1]]
    return {
        "facts": len(facts), "gold": len(gold), "match_similarity": MATCH_SIMILARITY,
        "precision": precision, "recall": recall,
        "sweep": {str(t): dict(zip(("precision", "recall"), pr(t), strict=True))
                  for t in SWEEP},
        "similar_to_gold": len(similar),
        "cite_supporting_message": len(supported) / max(len(similar), 1),
        "examples": [{"fact": facts[i].content, "gold": gold[best[i]][0],
                      "similarity": round(sim[i][best[i]], 3),
                      "sources": sorted(cited[i]), "gold_evidence": sorted(gold[best[i]][1])}
                     for i in range(min(len(facts), 8))]}


def _gold_day(text: str) -> date | None:
    for fmt in ("%d %B, %Y", "%d %B %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    return None


def score_narratives(mem: Memory, tenant: str, who: str, conv_id: str, item: dict[str, Any],
                     sessions: Sequence[int]) -> dict[str, Any]:
    """Per session: cosine of its episodes' mean narrative vector to the gold summary; whether
    some episode spans the gold event date (sessions with gold events only)."""
    episodes = EpisodeStore(mem.store, tenant)
    sims, dated, with_events = [], 0, 0
    for n in sessions:
        turns = episodes.session_turns(who, f"{conv_id}/session_{n}")
        rows = episodes.get(list(dict.fromkeys(r["episode"] for r in turns if r["episode"])))
        if not rows:
            continue
        vecs = mem.embedder.embed([r["e"]["narrative"] for r in rows])
        mean = [sum(col) / len(vecs) for col in zip(*vecs, strict=True)]
        summary = item["session_summary"].get(f"session_{n}_summary", "")
        sims.append(_cos(mean, mem.embedder.embed([summary])[0]))
        events = item["event_summary"].get(f"events_session_{n}", {})
        day = _gold_day(str(events.get("date", "")))
        if day is not None and any(v for k, v in events.items() if k != "date"):
            with_events += 1
            dated += any(r["e"]["occurred_at"].date() <= day <= r["e"]["occurred_until"].date()
                         for r in rows)
    return {"sessions": len(sims), "summary_similarity": sum(sims) / max(len(sims), 1),
            "sessions_with_events": with_events,
            "event_date_spanned": dated / max(with_events, 1)}


# --- decider --------------------------------------------------------------------------------

def decider_recall(mem: Memory, tenant: str, who: str, qs: Sequence[Question],
                   budget: int = 10) -> list[dict[str, Any]]:
    """Per question: evidence recall @budget of method iterative, its rounds and why it
    stopped (from the trace)."""
    rows: list[dict[str, Any]] = []
    for n, q in enumerate(qs, 1):
        req = SearchRequest(query=q.query, owner=who, method="iterative", max_messages=budget,
                            trace=True)
        res = mem.for_tenant(tenant).search(req)
        trace = res.trace
        rows.append({"category": q.category,
                     "recall": evidence_recall(q.gold, [h.id for h in res.hits]),
                     "rounds": len(trace.rounds) if trace else 0,
                     "decider_calls": trace.decider_calls if trace else 0,
                     "stop": trace.stop if trace else ""})
        if n % 10 == 0 or n == len(qs):
            _log(f"  decider {n}/{len(qs)}")
    return rows


def compare_deciders(offline: list[dict[str, Any]], llm: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean recall of each, per category, and question by question: how often the LLM decider
    found more or less of the evidence."""
    def mean(rows: Sequence[dict[str, Any]]) -> float:
        return round(float(sum(r["recall"] for r in rows)) / max(len(rows), 1), 4)

    categories = sorted({r["category"] for r in offline})
    return {
        "questions": len(offline),
        "offline_recall_at_10": mean(offline), "llm_recall_at_10": mean(llm),
        "by_category": {str(c): {"n": sum(r["category"] == c for r in offline),
                                 "offline": mean([r for r in offline if r["category"] == c]),
                                 "llm": mean([r for r in llm if r["category"] == c])}
                        for c in categories},
        "llm_better": sum(b["recall"] > a["recall"] for a, b in zip(offline, llm, strict=True)),
        "llm_worse": sum(b["recall"] < a["recall"] for a, b in zip(offline, llm, strict=True)),
        "second_round": {"offline": sum(r["rounds"] > 1 for r in offline),
                         "llm": sum(r["rounds"] > 1 for r in llm)},
        "stops": {"offline": dict(Counter(r["stop"] for r in offline)),
                  "llm": dict(Counter(r["stop"] for r in llm))},
        "rows": {"offline": offline, "llm": llm}}


def form(mem: Memory, tenant: str, who: str, session_ids: Sequence[str]) -> int:
    """Form the sessions; the episodes created."""
    return sum(mem.former.form(mem.stores(tenant), who, s).created for s in session_ids)


# --- the run --------------------------------------------------------------------------------

def _llm_settings(settings: Settings) -> tuple[Settings, bool]:
    """Settings with an LLM: the configured one, else the local server (started here; True
    when this run started it)."""
    if settings.llm().enabled:
        return settings, False
    cfg = local_server.LocalLLMConfig.from_env()
    started = not local_server.status(cfg).running
    env = local_server.llm_env(local_server.start(cfg))
    return settings.model_copy(update={
        "llm_base_url": env["GRAPHMEM_LLM_BASE_URL"], "llm_model": env["GRAPHMEM_LLM_MODEL"],
        "llm_json_mode": env["GRAPHMEM_LLM_JSON_MODE"],
        "llm_timeout_s": float(env["GRAPHMEM_LLM_TIMEOUT_S"])}), started


def run(settings: Settings, data: Path, json_out: Path | None, conversation: str | None = None,
        sessions: int = 2, questions: int = 30, decider_questions: int = 10,
        answer_tokens: int | None = None) -> dict[str, Any]:
    items = json.loads(data.read_text(encoding="utf-8"))
    item = next((i for i in items if conversation in (None, i["sample_id"])), None)
    if item is None:
        raise SystemExit(f"no conversation {conversation!r} in {data}")
    tenant = "bench-llm-" + secrets.token_hex(6)
    conv = next(c for c in locomo.load(data, owner_prefix=f"{tenant}-")
                if c.sample_id == item["sample_id"])
    who, conv_id = conv.messages[0].owner, conv.sample_id
    order = list(dict.fromkeys(m.session_id for m in conv.messages))
    llm_sessions = list(range(1, sessions + 1))
    with_llm, started = _llm_settings(settings)
    out: dict[str, Any] = {"conversation": conv_id, "tenant": tenant, "model": with_llm.llm_model,
                           "llm_sessions": llm_sessions, "messages": len(conv.messages),
                           "sessions": len(order)}
    seconds: dict[str, float] = {}
    plain = Memory.open(settings.model_copy(update={
        "llm_base_url": None, "llm_model": None, "iterative_decider": "offline"}))
    mem = Memory(with_llm.model_copy(update={"iterative_decider": "llm"}), plain.store,
                 plain.embedder)
    base_tenant = tenant + "-extractive"
    try:
        _timed(seconds, "ingest", lambda: plain.ops(tenant).ingest_messages([
            MessageIn.model_validate(m.model_dump()) for m in conv.messages]))
        llm_ids = [f"{conv_id}/session_{n}" for n in llm_sessions]
        _timed(seconds, "formation_llm", lambda: form(mem, tenant, who, llm_ids))
        _timed(seconds, "formation_rest", lambda: form(
            plain, tenant, who, [s for s in order if s not in llm_ids]))
        first = [m for m in conv.messages if m.session_id in llm_ids]
        if first:
            plain.ops(base_tenant).ingest_messages(
                [MessageIn.model_validate(m.model_dump()) for m in first])
        for s in llm_ids:
            plain.former.form(plain.stores(base_tenant), who, s)
        out["extraction"] = score_extraction(mem, tenant, who,
                                             gold_observations(item, llm_sessions))
        out["narratives"] = {
            "llm": score_narratives(mem, tenant, who, conv_id, item, llm_sessions),
            "extractive": score_narratives(plain, base_tenant, who, conv_id, item,
                                           llm_sessions)}
        qs = questions_of(conv, max(questions, decider_questions))
        as_of = max(m.timestamp for m in conv.messages) + timedelta(days=1)
        out["answers"] = _timed(seconds, "answers",
                                lambda: score_answers(mem, tenant, who, qs[:questions], as_of,
                                                      answer_tokens))
        dq = qs[:decider_questions]
        offline = _timed(seconds, "decider_offline",
                         lambda: decider_recall(plain, tenant, who, dq))
        llm_rows = _timed(seconds, "decider_llm", lambda: decider_recall(mem, tenant, who, dq))
        out["decider"] = {"budget": 10, **compare_deciders(offline, llm_rows)}
        report = mem.for_tenant(tenant).usage()
        out["cost"] = {op: {"calls": t.calls, "failures": t.failures,
                            "prompt_tokens": t.prompt_tokens,
                            "completion_tokens": t.completion_tokens,
                            "tokens_per_call": round(t.total_tokens / max(t.calls, 1)),
                            "seconds_per_call": round(t.latency_ms / 1000 / max(t.calls, 1), 1)}
                       for op, t in report.totals.items()}
        out["seconds"] = seconds
        out["seconds_per_conversation"] = round(sum(seconds.values()), 1)
    finally:
        for t in (tenant, base_tenant):
            plain.ops(t).delete_owner(who)
        if mem.reader is not None:
            mem.reader.close()
        plain.close()
        if started:
            local_server.stop(local_server.LocalLLMConfig.from_env())
    out["finished_at"] = datetime.now(UTC).isoformat()
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    _log(json.dumps({k: v for k, v in out.items() if k not in ("answers", "decider")}, indent=2,
                    default=str))
    _log(json.dumps({k: v for k, v in out.get("decider", {}).items() if k != "rows"}, indent=2))
    _log(json.dumps({k: v for k, v in out.get("answers", {}).items() if k != "rows"}, indent=2))
    return out
