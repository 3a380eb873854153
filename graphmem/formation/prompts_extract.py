"""The prompt of fact extraction ("extract_facts"): plain functions building chat messages.

One system message says what to extract, the rules, and one worked example (input and reply,
with the ids a real prompt has: no placeholder to copy); one user message renders the stretch of
conversation (relative dates resolved by `graphmem.messages.temporal.annotate`, messages numbered
``m1`` .. ``mN``: `aliases`) and the owner's current profile, so the model can choose
ADD / UPDATE / DELETE / NOOP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC

from graphmem.messages.temporal import annotate
from graphmem.models import MessageLike
from graphmem.retrieval.context import prompt_safe

__all__ = ["MessageLike", "aliases", "extract_messages", "render_message", "render_profile"]


EXAMPLE_CONVERSATION = """\
Owner: Joanna

Current profile of Joanna:
employer: Acme

Conversation (times in UTC):
[m1] 2023-06-02 18:10 Joanna: I finally adopted a dog last Sunday [2023-05-28]! His name is Max.
[m2] 2023-06-02 18:11 Nate: Congrats! Are you still at Acme?
[m3] 2023-06-02 18:12 Joanna: No, I quit in April. I write screenplays full time now.
[m4] 2023-06-02 18:13 Nate: Brave move. I'm off to Tokyo for a tournament next week."""

EXAMPLE_REPLY = """\
{"facts": [
  {"subject": "Joanna", "type": "pet", "content": "Joanna adopted a dog named Max",
   "valid_from": "2023-05-28", "explicit": true, "confidence": null, "sources": ["m1"]},
  {"subject": "Joanna", "type": "occupation", "content": "Joanna writes screenplays full time",
   "valid_from": "2023-04", "explicit": true, "confidence": null, "sources": ["m3"]},
  {"subject": "Nate", "type": "plan", "content": "Nate travels to Tokyo for a tournament",
   "valid_from": null, "explicit": true, "confidence": null, "sources": ["m4"]}
 ],
 "profile": [
  {"op": "DELETE", "key": "employer", "value": null, "explicit": true, "sources": ["m2", "m3"]},
  {"op": "ADD", "key": "occupation", "value": "screenwriter", "explicit": false,
   "sources": ["m3"]},
  {"op": "ADD", "key": "pet", "value": "dog named Max", "explicit": true, "sources": ["m1"]}
 ]}"""

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
- Each message starts with its id in square brackets: m1, m2, m3, ... Every fact and every \
profile operation cites in "sources" the ids of the messages that say it (usually one). Cite \
only ids listed in the conversation, and only messages that really say the fact.
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

Example. For this input:
{EXAMPLE_CONVERSATION}

the reply is:
{EXAMPLE_REPLY}

Reply with only a JSON object, no prose and no code fence, with the keys "facts" and "profile" \
as in the example, citing the ids of the conversation you are given.
"""


def aliases(messages: Sequence[MessageLike]) -> dict[str, str]:
    """The ids the model sees and cites, ``m1`` .. ``mN`` in order, mapped to the real ids."""
    return {f"m{n}": m.id for n, m in enumerate(messages, 1)}


def render_message(message: MessageLike, alias: str | None = None) -> str:
    """``[m3] 2023-05-08 13:56 Caroline: text`` (``alias``, else the message's id), the time in
    UTC, relative dates annotated.

    Lines after the first of a multi-line text are indented, so each message starts a line.
    """
    stamp = message.timestamp.astimezone(UTC)
    text = prompt_safe(annotate(message.text, message.timestamp)).strip().replace("\n", "\n    ")
    return prompt_safe(f"[{alias or message.id}] {stamp:%Y-%m-%d %H:%M} {message.speaker}: {text}")


def render_profile(profile: Mapping[str, str]) -> str:
    """The profile as ``key: value`` lines, sorted by key; ``(empty)`` when there is none."""
    if not profile:
        return "(empty)"
    return prompt_safe(
        "\n".join(f"{key}: {' '.join(value.split())}" for key, value in sorted(profile.items())))


def user_message(owner: str, messages: Sequence[MessageLike], profile: Mapping[str, str]) -> str:
    lines = "\n".join(render_message(m, a) for a, m in zip(aliases(messages), messages,
                                                            strict=True))
    ids = f"m1 .. m{len(messages)}" if len(messages) > 1 else "m1"
    return (
        f"Owner: {owner}\n\n"
        f"Current profile of {owner}:\n{render_profile(profile)}\n\n"
        f"Conversation (times in UTC):\n{lines}\n\n"
        f"Reply with the JSON object of facts and profile operations; cite only {ids}."
    )


def extract_messages(
    owner: str, messages: Sequence[MessageLike], profile: Mapping[str, str]
) -> list[dict[str, str]]:
    """The chat messages of one "extract_facts" call: the system prompt and the stretch."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_message(owner, messages, profile)},
    ]
