"""Unit study: evidence recall of vector recall alone, by the kind of unit that is embedded.

Everything runs in-process with the configured embedder and exact cosine (numpy); no Neo4j. Each
kind ranks an owner's messages for a question, and the first ``budget`` messages are scored like
the main benchmark (share of the gold evidence dia_ids among them). The kinds:

- ``message``: the whole message, embedded as ``"speaker: text"``;
- ``sentence``: one unit per sentence (`graphmem.messages.ingest.split_sentences`),
  ``"speaker: sentence"``;
  a message ranks by its best sentence (what graphmem stores);
- ``context``: the message with its previous and next message of the session, embedded as one text;
- ``neighbour_avg``: the message vector plus 0.5 x each neighbour's vector, renormalised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphmem.datasets.locomo import Conversation, dia_id
from graphmem.embeddings import Embedder
from graphmem.messages.ingest import split_sentences
from graphmem.models import MessageIn

Matrix = npt.NDArray[np.float64]
KINDS = ("message", "sentence", "context", "neighbour_avg")


@dataclass(frozen=True)
class Probe:
    """One scored question: whose memory, the query, its LoCoMo category, gold dia_ids."""

    owner: str
    query: str
    category: int
    gold: tuple[str, ...]


def evidence_recall(gold: Sequence[str], returned_ids: Sequence[str]) -> float:
    """LoCoMo's ``recall_acc``: the share of gold dia_ids among the returned messages. A gold
    id listed twice counts once (as a returned message does); a question without gold evidence
    has no recall (ValueError: leave it out, as `graphmem.bench.locomo.probes_of` does)."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("no gold evidence: a question without evidence cannot be scored")
    got = {dia_id(i) for i in returned_ids}
    return len(wanted & got) / len(wanted)


def percentiles(ms: Sequence[float]) -> dict[str, float]:
    """Median and 95th percentile of timings in milliseconds, with their count (zeros when
    there are none): what every benchmark reports as ``latency_ms``."""
    if not ms:
        return {"p50": 0.0, "p95": 0.0, "n": 0.0}
    p50, p95 = np.percentile(np.asarray(ms, dtype=np.float64), [50, 95])
    return {"p50": float(p50), "p95": float(p95), "n": float(len(ms))}


def _line(m: MessageIn) -> str:
    return f"{m.speaker}: {m.text}"


def _matrix(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    return np.asarray(embedder.embed(list(texts)), dtype=np.float64).reshape(len(texts), -1)


def _normalise(m: Matrix) -> Matrix:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    out: Matrix = m / np.where(norms == 0.0, 1.0, norms)
    return out


def _neighbours(messages: Sequence[MessageIn]) -> list[tuple[int | None, int | None]]:
    """Index of the previous and next message of the same session (``messages`` in order)."""
    out: list[tuple[int | None, int | None]] = []
    for i, m in enumerate(messages):
        prev = i - 1 if i > 0 and messages[i - 1].session_id == m.session_id else None
        last = i + 1 == len(messages)
        nxt = i + 1 if not last and messages[i + 1].session_id == m.session_id else None
        out.append((prev, nxt))
    return out


Scorer = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]


def _scorers(embedder: Embedder, messages: Sequence[MessageIn]) -> dict[str, Scorer]:
    """For each kind, a function from a query vector to one score per message."""
    near = _neighbours(messages)
    whole = _matrix(embedder, [_line(m) for m in messages])

    owners: list[int] = []
    sentences: list[str] = []
    for i, m in enumerate(messages):
        for s in split_sentences(m.text):
            owners.append(i)
            sentences.append(f"{m.speaker}: {s}")
    sent = _matrix(embedder, sentences)
    sent_owner = np.asarray(owners, dtype=np.intp)

    ctx_texts = [
        "\n".join(_line(messages[j]) for j in (p, i, n) if j is not None)
        for i, (p, n) in enumerate(near)
    ]
    ctx = _matrix(embedder, ctx_texts)

    avg = whole.copy()
    for i, (p, n) in enumerate(near):
        for j in (p, n):
            if j is not None:
                avg[i] += 0.5 * whole[j]
    avg = _normalise(avg)

    def by_sentence(q: Matrix) -> Matrix:
        best = np.full(len(messages), -np.inf)
        np.maximum.at(best, sent_owner, sent @ q)
        return best

    return {
        "message": lambda q: whole @ q,
        "sentence": by_sentence,
        "context": lambda q: ctx @ q,
        "neighbour_avg": lambda q: avg @ q,
    }


def unit_study(
    embedder: Embedder,
    conversations: Sequence[Conversation],
    probes: Sequence[Probe],
    budgets: Sequence[int],
    stop: threading.Event | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """``{kind: {"recall": {budget: mean recall}}}`` over ``probes`` (as strings for JSON)."""
    totals = {kind: dict.fromkeys(budgets, 0.0) for kind in KINDS}
    by_owner = {c.messages[0].owner: c.messages for c in conversations if c.messages}
    queries = _matrix(embedder, [p.query for p in probes]) if probes else np.zeros((0, 0))
    count = 0
    for owner, messages in by_owner.items():
        mine = [(i, p) for i, p in enumerate(probes) if p.owner == owner]
        if not mine:
            continue
        if stop is not None and stop.is_set():
            raise RuntimeError("stopped")
        scorers = _scorers(embedder, messages)
        ids = [m.id or "" for m in messages]
        for qi, probe in mine:
            count += 1
            for kind, score in scorers.items():
                # stable: equal scores keep chronological order
                order = np.argsort(-score(queries[qi]), kind="stable")
                for b in budgets:
                    top = [ids[int(j)] for j in order[:b]]
                    totals[kind][b] += evidence_recall(probe.gold, top)
    return {
        kind: {"recall": {str(b): (v / count if count else 0.0) for b, v in per.items()}}
        for kind, per in totals.items()
    }
