"""Topic labels and short summaries written by an LLM (the background job ``label_topics``,
enqueued with a build of an owner's tree when an LLM is configured). Each topic no LLM has
labelled yet is shown to the LLM by its keyphrases, a few member titles and the opening text of
a few members; its reply (a label and a one- or two-sentence summary, validated) is stored with
the model that wrote it. Without an LLM nothing runs: the keyphrase labels stand and no summary
is written. A failed call writes nothing for that topic (its keyphrases stay its label); the
job then fails naming the topics left, and the queue retries it like every derived-memory job,
the topics done meanwhile kept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator

from graphmem.llm.client import LLMClient, LLMError
from graphmem.llm.usage import tenant_scope
from graphmem.retrieval.context import prompt_safe
from graphmem.store.documents import DocumentStore

OPERATION = "label_topic"
"""The operation the usage ledger counts these calls under."""
TOPICS_PER_JOB = 200
"""Topics one job run labels at most (the rest: the next build's job)."""
MEMBERS_SHOWN = 8
"""Member documents shown per topic."""
CHUNKS_SHOWN = 2
"""Opening chunks of each member shown."""
EXCERPT_CHARS = 400
"""Characters of each member's opening text shown."""
MAX_LABEL_CHARS = 80
MAX_SUMMARY_CHARS = 400


class TopicLabel(BaseModel):
    """The LLM's reply for one topic."""

    label: str = Field(min_length=1, max_length=MAX_LABEL_CHARS,
                       description="A short name for what the documents are about")
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS,
                         description="One or two sentences on what the documents cover")

    @field_validator("label", "summary")
    @classmethod
    def _text(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("empty")
        return value


EXAMPLE_IN = """\
Keyphrases: sourdough, starter, loaf
Documents (3): Sourdough basics; Baking day notes; Oven temperatures
[1] Sourdough basics: A sourdough starter is flour and water left to ferment...
[2] Baking day notes: Knead the dough, let it rise overnight, then bake the loaf..."""
EXAMPLE_OUT = ('{"label": "Sourdough bread baking", "summary": "Notes on keeping a sourdough '
               'starter and on kneading, proofing and baking loaves."}')
SYSTEM = f"""\
You name a group of documents that a clustering put together. You see the group's keyphrases, \
its documents' titles and the opening text of some of them. Write:
- "label": a short name (2 to 6 words) for what the documents have in common;
- "summary": one or two sentences on what they cover, from the text shown only (no outside \
knowledge, no guesses).

Example. For this group:
{EXAMPLE_IN}

the reply is:
{EXAMPLE_OUT}

Reply with only a JSON object with the keys "label" and "summary", no prose and no code fence."""


def label_messages(keyphrases: str, titles: Sequence[str],
                   excerpts: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages asking for one topic's label and summary."""
    shown = [t for t in titles if t][:MEMBERS_SHOWN]
    lines = [f"Keyphrases: {keyphrases or '(none)'}",
             f"Documents ({len(titles)}): {'; '.join(shown) or '(untitled)'}"]
    for i, (title, text) in enumerate(zip(titles[:MEMBERS_SHOWN], excerpts, strict=False),
                                      start=1):
        body = " ".join(text.split())[:EXCERPT_CHARS]
        if body:
            lines.append(f"[{i}] {title}: {body}" if title else f"[{i}] {body}")
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt_safe("Group:\n" + "\n".join(lines))}]


def label_topics(client: LLMClient, store: DocumentStore, owner: str,
                 now: datetime | None = None) -> dict[str, Any]:
    """The ``label_topics`` job: label and summarise each of ``owner``'s topics no LLM has
    labelled yet. Raises `LLMError` naming how many failed when any did (the job is retried;
    the ones written stay)."""
    rows = store.topics_to_label(owner, TOPICS_PER_JOB, MEMBERS_SHOWN, CHUNKS_SHOWN)
    written: list[str] = []
    failed: dict[str, str] = {}
    with tenant_scope(store.tenant):
        for row in rows:
            try:
                reply = client.complete_structured(
                    OPERATION, label_messages(row["keyphrases"] or "", list(row["titles"]),
                                              list(row["excerpts"])), TopicLabel)
            except LLMError as exc:
                failed[row["id"]] = str(exc)
                continue
            if store.set_topic_label(owner, row["id"], reply.label, reply.summary,
                                     client.model, now or datetime.now(UTC)):
                written.append(row["id"])
    if failed:
        first = next(iter(failed.items()))
        raise LabelsFailed(f"{len(failed)} of {len(rows)} topics of {owner!r} not labelled "
                           f"({len(written)} written); first: {first[0]}: {first[1]}")
    return {"owner": owner, "labelled": len(written), "model": client.model}


class LabelsFailed(LLMError):
    """Some topics could not be labelled (the job fails and is retried)."""
