"""The prompt of fact extraction ("extract_facts"): plain functions building chat messages.

One system message says what to extract, the rules and the JSON reply format; one user message
renders the stretch of conversation (relative dates resolved by `graphmem.temporal.annotate`)
and the owner's current profile, so the model can choose ADD / UPDATE / DELETE / NOOP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC

from graphmem.models import MessageLike
from graphmem.temporal import annotate

__all__ = ["MessageLike", "extract_messages", "render_message", "render_profile"]


REPLY_FORMAT = """\
{
  "facts": [
    {"subject": "Caroline", "type": "city", "content": "lives in Boston",
     "valid_from": "2023-05-07", "explicit": true, "confidence": 0.9, "sources": ["<message id>"]}
  ],
  "profile": [
    {"op": "UPDATE", "key": "employer", "value": "Acme", "explicit": true,
     "sources": ["<message id>", "<message id>"]}
  ]
}"""

SYSTEM = f"""\
You extract long-term memory from a stretch of conversation. The memory belongs to its owner, \
named below. Extract two things:

1. facts: statements about people, places, things and events that are worth remembering \
(what someone did, has, likes, plans, needs; where they live or work; relationships; events).
2. profile: operations on the owner's profile, a set of key: value facts about the owner, \
given below as it is now. For each key the conversation bears on, choose one op:
   - ADD: a new key with a value;
   - UPDATE: a key that exists gets a new value;
   - DELETE: a key that exists is no longer true (no value);
   - NOOP: the conversation confirms the current value (nothing to change).

Rules:
- Only facts stated or clearly implied in the messages. No guesses, no general knowledge, \
nothing from this instruction or its example.
- Every fact and every profile operation cites, in "sources", the ids of the messages it \
comes from (the ids in square brackets at the start of each line). Cite only those ids.
- "explicit" is true when the fact is stated outright, false when it is inferred from what \
was said. Give inferred facts a "confidence" between 0 and 1.
- Time: relative dates in the messages are followed by their resolved date in brackets, \
e.g. "yesterday [2023-05-07]". Use those resolved dates, never the relative words. \
"valid_from" is when the fact became true, as an ISO date (2023-05-07) or date-time; \
null when not said (the time of the message is then used).
- "subject": the person or thing the fact is about, by name (e.g. "Caroline", not "she" or \
"the user").
- "type": a short snake_case predicate, e.g. city, employer, hobby, pet, requirement, \
relationship, plan, event.
- "content": a short self-contained statement, resolving pronouns and relative dates.
- Profile keys are short snake_case names like the types; reuse an existing key when it fits.
- Nothing worth remembering: reply with empty lists.

Reply with only a JSON object, no prose and no code fence, in this format:
{REPLY_FORMAT}
"""


def render_message(message: MessageLike) -> str:
    """``[id] 2023-05-08 13:56 Caroline: text``, the time in UTC, relative dates annotated.

    Lines after the first of a multi-line text are indented, so each message starts a line.
    """
    stamp = message.timestamp.astimezone(UTC)
    text = annotate(message.text, message.timestamp).strip().replace("\n", "\n    ")
    return f"[{message.id}] {stamp:%Y-%m-%d %H:%M} {message.speaker}: {text}"


def render_profile(profile: Mapping[str, str]) -> str:
    """The profile as ``key: value`` lines, sorted by key; ``(empty)`` when there is none."""
    if not profile:
        return "(empty)"
    return "\n".join(f"{key}: {' '.join(value.split())}" for key, value in sorted(profile.items()))


def user_message(owner: str, messages: Sequence[MessageLike], profile: Mapping[str, str]) -> str:
    lines = "\n".join(render_message(m) for m in messages)
    return (
        f"Owner: {owner}\n\n"
        f"Current profile of {owner}:\n{render_profile(profile)}\n\n"
        f"Conversation (times in UTC):\n{lines}\n\n"
        "Reply with the JSON object of facts and profile operations."
    )


def extract_messages(
    owner: str, messages: Sequence[MessageLike], profile: Mapping[str, str]
) -> list[dict[str, str]]:
    """The chat messages of one "extract_facts" call: the system prompt and the stretch."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_message(owner, messages, profile)},
    ]
