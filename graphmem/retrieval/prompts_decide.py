"""The prompt of the iterative retrieval decider ("decide"): plain functions building chat
messages and the reply's JSON schema.

One system message says the task, the rules and one worked example (input and reply, with ids
like a real prompt's: no placeholder to copy); one user message gives the question, the queries
already searched, the evidence already kept and the candidates, numbered ``c1`` .. ``cN`` (the
decider maps them back to the real ids). A small local model (1.5B) copes with this form.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC
from typing import Any

from graphmem.retrieval.context import prompt_safe
from graphmem.retrieval.iterative import Candidate

MAX_TEXT = 400
"""Characters of a candidate's text shown to the model."""

EXAMPLE_INPUT = """\
Question: What video games does Nate play?

Already searched: "What video games does Nate play?"

Evidence already kept: (none)

Candidates:
[c1] 2022-01-21 Nate: I won my first Valorant tournament last week [2022-01-14]!
[c2] 2022-01-21 Joanna: Congrats! What game was it?
[c3] 2022-03-02 Nate: Counter-Strike is still my favourite, I play it every night.
[c4] 2022-03-02 Joanna: I started writing a new screenplay about a detective.
[c5] 2022-05-10 Nate: My turtles love watching me play, haha.

Keep at most 5 candidates. Ask at most 2 new queries."""

EXAMPLE_REPLY = """\
{"keep": ["c1", "c3"], "queries": ["Nate playing Xenoblade or Street Fighter", \
"Nate gaming convention new game"], "sufficient": false}"""

SYSTEM = f"""\
You help search a long conversation for the messages that answer a question. You see the \
question, the searches already made, the evidence already kept, and candidate messages found \
by those searches. Decide three things:

1. keep: the ids of the candidates that help answer the question (say it, or give a fact the \
answer needs). Keep none that do not help.
2. queries: new short search queries for evidence still missing (another person, another \
time, another item of a list, a detail the question needs). Do not repeat a search already \
made. Use names and words the messages would contain.
3. sufficient: true when the kept evidence answers the question completely, else false.

Rules:
- Each candidate starts with its id in square brackets: c1, c2, c3, ... Cite only ids listed \
in the candidates you are given.
- Questions that ask for several things (lists, "both", "all", how often) need evidence for \
each; they are rarely sufficient after one search.
- Relative dates are followed by their resolved date in brackets, e.g. "last week [2022-01-14]".

Example. For this input:
{EXAMPLE_INPUT}

the reply is:
{EXAMPLE_REPLY}

Reply with only a JSON object, no prose and no code fence, with the keys "keep", "queries" and \
"sufficient" as in the example, citing the ids of the candidates you are given.
"""


def render_candidate(alias: str, c: Candidate) -> str:
    """``[c3] 2022-03-02 Nate: text`` (the date in UTC; the text cut at `MAX_TEXT`)."""
    text = " ".join(c.text.split())
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + " ..."
    day = f"{c.timestamp.astimezone(UTC):%Y-%m-%d} " if c.timestamp is not None else ""
    who = f"{c.speaker}: " if c.speaker else ""
    return prompt_safe(f"[{alias}] {day}{who}{text}")


def user_message(question: str, issued: Sequence[str], kept: Sequence[Candidate],
                 shown: Sequence[Candidate], max_queries: int, core_room: int) -> str:
    searched = "; ".join(json.dumps(prompt_safe(q), ensure_ascii=False) for q in issued)
    evidence = "\n".join(render_candidate(f"k{n}", c) for n, c in enumerate(kept, 1)) or "(none)"
    lines = "\n".join(render_candidate(f"c{n}", c) for n, c in enumerate(shown, 1)) or "(none)"
    ids = f"c1 .. c{len(shown)}" if len(shown) > 1 else "c1" if shown else "no id"
    return (
        f"Question: {prompt_safe(question)}\n\n"
        f"Already searched: {searched}\n\n"
        f"Evidence already kept:\n{evidence}\n\n"
        f"Candidates:\n{lines}\n\n"
        f"Keep at most {core_room} candidates. Ask at most {max_queries} new queries.\n"
        f"Reply with the JSON object; cite only {ids}."
    )


def decide_messages(question: str, issued: Sequence[str], kept: Sequence[Candidate],
                    shown: Sequence[Candidate], max_queries: int,
                    core_room: int) -> list[dict[str, str]]:
    """The chat messages of one "decide" call: the system prompt and the round."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_message(question, issued, kept, shown, max_queries,
                                                 core_room)},
    ]


def json_schema(ids: Sequence[str], max_queries: int) -> Mapping[str, Any]:
    """The reply's JSON schema for one call: ``keep`` only among ``ids``, at most
    ``max_queries`` queries (sent in ``json_schema`` mode and in corrections)."""
    keep: dict[str, Any] = {"type": "array", "items": {"type": "string", "enum": list(ids)}}
    if not ids:
        keep = {"type": "array", "maxItems": 0, "items": {"type": "string"}}
    return {
        "type": "object",
        "properties": {
            "keep": keep,
            "queries": {"type": "array", "maxItems": max_queries,
                        "items": {"type": "string", "minLength": 1, "maxLength": 500}},
            "sufficient": {"type": "boolean"},
        },
        "required": ["keep", "queries", "sufficient"],
        "additionalProperties": False,
    }
