"""LongMemEval (Wu et al., ICLR 2025) files: questions over a chat history of user-assistant
sessions, with the gold evidence sessions and turns.

Two layouts are read:

- the official one (a JSON list; per question ``question_id``, ``question_type``, ``question``,
  ``answer``, ``question_date``, ``haystack_session_ids``, ``haystack_dates``,
  ``haystack_sessions`` (lists of ``{role, content, has_answer?}``) and ``answer_session_ids``):
  the gold evidence is the answer sessions and the turns marked ``has_answer``;
- a repackaged one (``{"file": ..., "data": [{id, question_type, questions: [...],
  conversation: [{role, content, date}]}]}``) that flattens the sessions into one turn list, each
  turn carrying its session's date, and drops the session ids, ``has_answer`` and the question
  date. Sessions are rebuilt as the runs of consecutive turns with the same date. When the file
  was drawn from ``longmemeval_oracle.json`` (its ``file`` says so), the history holds only the
  evidence sessions, so every session is a gold session; otherwise the gold is unknown.

A question whose id ends in ``_abs`` (or marked ``is_abstention``) is an abstention question: what
it asks about was never said, so it has no gold evidence.

Each turn becomes a message: id ``<question id>/<session id>/<turn index>``, session
``<question id>/<session id>``, speaker and role the turn's role, timestamps from the session's
date (UTC, as the file gives no zone), turns 30 s apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from graphmem.models import MessageIn

TURN_GAP = timedelta(seconds=30)
_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))?(?: (\d{1,2}):(\d{2}))?$")
_SAFE = re.compile(r"[^A-Za-z0-9._:-]+")
Gold = Literal["has_answer", "oracle_history", "none", "unknown"]


@dataclass
class Turn:
    role: Literal["user", "assistant"]
    content: str
    has_answer: bool = False


@dataclass
class Session:
    id: str
    date: datetime
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Item:
    """One question with its history and gold evidence (session ids as in `sessions`)."""

    id: str
    history: str
    """Whose history: the question's own (official files), or the conversation's (repackaged
    files, where questions may share one); message ids start with it."""
    question_type: str
    question: str
    answer: str
    abstention: bool
    question_date: datetime | None
    sessions: list[Session]
    gold_sessions: tuple[str, ...]
    gold: Gold
    """Where the gold came from: ``has_answer`` (official: answer sessions and has_answer
    turns), ``oracle_history`` (every session of an oracle history), ``none`` (abstention),
    ``unknown`` (a repackaged file without it)."""
    layout: Literal["official", "repackaged"] = "official"

    def session_key(self, session_id: str) -> str:
        """The graphmem session id of one of this item's sessions."""
        return f"{self.history}/{session_id}"

    def message_id(self, session_id: str, turn: int) -> str:
        return f"{self.history}/{session_id}/{turn}"

    @property
    def gold_turns(self) -> tuple[str, ...]:
        """Message ids of the turns marked ``has_answer`` (official files only)."""
        return tuple(self.message_id(s.id, i) for s in self.sessions
                     for i, t in enumerate(s.turns) if t.has_answer)

    def messages(self, owner: str) -> list[MessageIn]:
        out = []
        for s in self.sessions:
            for i, t in enumerate(s.turns):
                if not t.content.strip():
                    continue
                out.append(MessageIn(
                    id=self.message_id(s.id, i), owner=owner, session_id=self.session_key(s.id),
                    speaker=t.role, role=t.role, text=t.content, timestamp=s.date + i * TURN_GAP))
        return out


def session_of(message_id: str) -> str:
    """The session part (``<session id>``) of a message id made by `Item.message_id`."""
    return message_id.rsplit("/", 2)[-2]


def parse_date(text: str) -> datetime:
    """``2023/05/30 (Tue) 21:48`` (LongMemEval's form; weekday and time optional) as UTC."""
    m = _DATE.match(text.strip())
    if m is None:
        raise ValueError(f"not a LongMemEval date: {text!r}")
    year, month, day, hour, minute = (int(g) if g else 0 for g in m.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def _safe(name: str) -> str:
    """An id usable in a graphmem name, without ``/`` (letters, digits and ``._:-``)."""
    return _SAFE.sub("_", name).strip("_") or "x"


def _turn(raw: dict[str, Any]) -> Turn:
    role: Literal["user", "assistant"] = (
        "assistant" if raw.get("role") == "assistant" else "user")
    return Turn(role, str(raw.get("content", "")), bool(raw.get("has_answer", False)))


def _official(raw: dict[str, Any]) -> Item:
    qid = str(raw["question_id"])
    abstention = qid.endswith("_abs")
    ids = [_safe(str(s)) for s in raw["haystack_session_ids"]]
    sessions = [Session(sid, parse_date(str(date)), [_turn(t) for t in turns])
                for sid, date, turns in zip(ids, raw["haystack_dates"], raw["haystack_sessions"],
                                            strict=True)]
    answers = {_safe(str(s)) for s in raw.get("answer_session_ids", [])}
    gold = () if abstention else tuple(s for s in ids if s in answers)
    qdate = raw.get("question_date")
    return Item(_safe(qid), _safe(qid), str(raw["question_type"]), str(raw["question"]),
                str(raw["answer"]), abstention, parse_date(str(qdate)) if qdate else None,
                sessions, gold, "none" if abstention else "has_answer")


def _repackaged(item: dict[str, Any], oracle: bool) -> list[Item]:
    sessions: list[Session] = []
    last: str | None = None
    for raw in item["conversation"]:
        date = str(raw["date"])
        if date != last:
            sessions.append(Session(f"s{len(sessions) + 1}", parse_date(date)))
            last = date
        sessions[-1].turns.append(_turn(raw))
    out = []
    for q in item["questions"]:
        abstention = bool(q.get("is_abstention")) or str(item["id"]).endswith("_abs")
        gold: Gold = "none" if abstention else "oracle_history" if oracle else "unknown"
        qid = _safe(f"{item['id']}-{q['id']}")
        out.append(Item(qid, _safe(str(item["id"])), str(item["question_type"]),
                        str(q["question"]), str(q["answer"]), abstention, None, sessions,
                        tuple(s.id for s in sessions) if gold == "oracle_history" else (), gold,
                        "repackaged"))
    return out


def load(path: str | Path) -> list[Item]:
    """Every question of an official or repackaged LongMemEval file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [_official(raw) for raw in data]
    oracle = "oracle" in str(data.get("file", ""))
    return [q for item in data["data"] for q in _repackaged(item, oracle)]
