"""LoCoMo (Maharana et al., ACL 2024) files: a JSON list of conversations with sessions and QA.

Each conversation becomes one owner. A session's messages start at the session's date and follow
30 s apart; an image a speaker shared is kept as text (its caption). Message ids are
``<sample_id>/<dia_id>`` (e.g. ``conv-26/D1:3``): ids are unique per tenant, and `dia_id` maps a
returned message back to the gold ``evidence`` of a question.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graphmem.models import MessageIn

DATE_FORMAT = "%I:%M %p on %d %B, %Y"
TURN_GAP = timedelta(seconds=30)
_SESSION = re.compile(r"^session_(\d+)$")


@dataclass
class Question:
    question: str
    answer: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    messages: list[MessageIn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def message_id(sample_id: str, dia_id: str) -> str:
    return f"{sample_id}/{dia_id}"


def dia_id(message_id: str) -> str:
    return message_id.rsplit("/", 1)[-1]


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shared an image: {caption}]".strip()
    return text


def load(path: str | Path, owner_prefix: str = "") -> list[Conversation]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for item in data:
        conv = Conversation(sample_id=str(item["sample_id"]))
        c = item["conversation"]
        numbers = sorted(int(m.group(1)) for k in c if (m := _SESSION.match(k)))
        for n in numbers:
            start = datetime.strptime(c[f"session_{n}_date_time"], DATE_FORMAT).replace(tzinfo=UTC)
            for i, turn in enumerate(c[f"session_{n}"]):
                text = turn_text(turn)
                if not text:
                    continue
                conv.messages.append(MessageIn(
                    id=message_id(conv.sample_id, str(turn["dia_id"])),
                    owner=owner_prefix + conv.sample_id,
                    session_id=f"{conv.sample_id}/session_{n}", speaker=str(turn["speaker"]),
                    text=text, timestamp=start + i * TURN_GAP,
                ))
        for qa in item.get("qa", []):
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            conv.questions.append(Question(
                question=str(qa["question"]), answer=str(answer), category=int(qa["category"]),
                evidence=[str(e) for e in qa.get("evidence", [])],
            ))
        out.append(conv)
    return out
