"""The prompt of the reader ("answer"): plain functions building chat messages.

One system message says how to answer and cite, with worked examples (a memory rendered as
`graphmem.retrieval.packing` renders it, evidence ids ``e1`` .. ``eN`` as a real prompt has
them, and the replies: one from a message, one from a document passage, cited by its evidence
id and placed by its document's title and section path), and a shorter one where the memory
does not hold the answer. One user message carries the question, the day it is asked and the
packed context.
"""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.documents.recall import chunk_line, document_header

EXAMPLE_DOCUMENT = "\n".join([
    document_header("handbook.md", 2, "Hiking club handbook", datetime(2024, 1, 5, tzinfo=UTC)),
    "[e3] " + chunk_line(["Trails", "Skyline Trail"], "The Skyline Trail loop is 5.5 miles "
                         "long and climbs 1,700 feet from the Paradise visitor center.")])

EXAMPLE_MEMORY = f"""\
## facts valid at 2024-03-10
[e1] Priya · employer: Priya works as a nurse at St Mary's hospital (valid from 2023-11-02)

## episodes
[e2] Hiking plans (happened 2024-02-17): Priya told Tom she hiked Mount Rainier's Skyline \
Trail with her sister and wants to try a longer trail in summer.

{EXAMPLE_DOCUMENT}

## session s-12 · 2024-02-19 18:04 UTC
[e4] 2024-02-19 18:04 Priya: We did the Skyline Trail last Saturday [2024-02-17], my sister \
came along!
[e5] 2024-02-19 18:05 Tom: Nice! How long did it take you?
[e6] 2024-02-19 18:06 Priya: About five hours, with a long lunch at Panorama Point."""

EXAMPLE_QUESTION = "When did Priya hike the Skyline Trail, and with whom?"
EXAMPLE_REPLY = '{"answer": "17 February 2024, with her sister", "citations": ["e4"], ' \
                '"insufficient": false}'
DOCUMENT_QUESTION = "How long is the Skyline Trail loop, and where is that written?"
DOCUMENT_REPLY = ('{"answer": "5.5 miles (Hiking club handbook, Trails > Skyline Trail)", '
                  '"citations": ["e3"], "insufficient": false}')
UNKNOWN_QUESTION = "What is Tom's job?"
UNKNOWN_REPLY = '{"answer": "", "citations": [], "insufficient": true}'

SYSTEM = f"""\
You answer a question from a person's long-term memory. The memory is given as lines: facts, \
episodes (summaries of conversations), passages of documents and messages. Each line starts \
with its evidence id in square brackets: e1, e2, e3, ...

Document passages come under a header naming their document: ## document "Title" (key, \
version N, valid from DATE). Each passage line starts with its section path (the headings from \
the top down, joined by " > "), then a colon and the document's own text.

Rules:
- Answer only from the memory: no outside knowledge, no guesses.
- Answer briefly: a name, a date, a place, a number or a short phrase.
- Dates: a relative date in a message is followed by its resolved date in brackets, \
e.g. "last Saturday [2024-02-17]". Use the resolved date, written as "17 February 2024".
- "citations": the evidence ids of the lines that support the answer (usually one to three). \
Cite only ids that appear in the memory you are given. A document passage is cited by its own \
evidence id, like any other line.
- When the question asks where something is written or what a document says, name the \
document by its title and the section path of the passage.
- When the memory does not hold the answer: "answer": "", "citations": [], \
"insufficient": true.

Example. Question (asked on 2024-03-10): {EXAMPLE_QUESTION}
Memory:
{EXAMPLE_MEMORY}

The reply is:
{EXAMPLE_REPLY}

For the question "{DOCUMENT_QUESTION}" and the same memory, the reply is:
{DOCUMENT_REPLY}

For the question "{UNKNOWN_QUESTION}" and the same memory, the reply is:
{UNKNOWN_REPLY}

Reply with only a JSON object with the keys "answer", "citations" and "insufficient", no prose \
and no code fence.
"""


def user_message(question: str, asked_on: datetime, context: str, count: int) -> str:
    ids = "none" if count == 0 else ("e1" if count == 1 else f"e1 .. e{count}")
    return (
        f"Question (asked on {asked_on:%Y-%m-%d}): {question}\n"
        f"Memory:\n{context or '(nothing found)'}\n\n"
        f"Reply with the JSON object; cite only {ids}."
    )


def answer_messages(question: str, asked_on: datetime, context: str,
                    count: int) -> list[dict[str, str]]:
    """The chat messages of one "answer" call."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": user_message(question, asked_on, context, count)}]
