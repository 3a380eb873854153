"""An owner's export (`graphmem.lifecycle.export`) stored again: the requests that store
its messages and agent runs as they were sent (`messages_of`, `traces_of`: each run's steps
written back as chat messages that read into the same steps). Its facts are restored as recorded by
`graphmem.facts.restore`; its document versions as recorded (`documents_of`, `parsed_of`: the
same text, sections and times, so the same chunks and the same version ids); the other kinds
are formed again (by the jobs; an owner's topic tree is built again from the restored
documents). Pure, no I/O."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphmem.documents.parse import Block, Parsed, parse
from graphmem.lifecycle.export import ExportRecord
from graphmem.models import MessageIn
from graphmem.procedural.models import TraceIn

STORED_AGAIN = ("message", "fact", "trace", "step", "document", "section")
"""The kinds an export stores again: what callers sent (`messages_of`, `traces_of`,
`documents_of`) and the facts as recorded (`graphmem.facts.restore`). The other kinds were
formed from them (episodes, entities, cases, clusters, skills, topics) and are formed again."""
REPARSED = ("text/plain", "text/markdown")
"""Media types whose stored text is the content as sent: parsed again as it was. The text of
the others (HTML, PDF) was extracted, blocks joined by blank lines: read back into the same
blocks, its sections giving the headings."""


def messages_of(records: Iterable[ExportRecord]) -> list[MessageIn]:
    """The messages of an export as they were sent (id, owner, session, speaker, role, text,
    event time, metadata)."""
    fields = ("id", "owner", "session_id", "speaker", "role", "text", "timestamp", "metadata")
    return [MessageIn.model_validate({f: r.properties[f] for f in fields if f in r.properties})
            for r in records if r.kind == "message"]


def _step_messages(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A run's steps as chat messages that read back into the same steps: OpenAI messages for
    turns and calls (the calls after an assistant turn in its ``tool_calls``), Anthropic
    ``tool_result`` blocks for results with a call id (``is_error`` keeps the error mark; a
    user's text after them joins their message), an OpenAI tool message for a result without
    one. Steps of one time only are joined, so each keeps its time."""
    out: list[dict[str, Any]] = []
    for s in steps:
        kind, text, cid = s["kind"], s.get("text", ""), s.get("call_id")
        stamp = {"timestamp": s["at"]} if s.get("at") else {}
        last = out[-1] if out else None
        if kind == "tool_call":
            call = {"id": cid, "type": "function",
                    "function": {"name": s["tool"], "arguments": s.get("arguments") or ""}}
            if last is not None and last["role"] == "assistant" \
                    and last.get("timestamp") == s.get("at"):
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call], **stamp})
        elif kind == "tool_result" and cid:
            block = {"type": "tool_result", "tool_use_id": cid, "content": text,
                     "is_error": bool(s.get("error"))}
            if last is not None and last.get("results") and last.get("timestamp") == s.get("at"):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block], "results": True, **stamp})
        elif kind == "tool_result":
            out.append({"role": "tool", "name": s.get("tool"), "content": text, **stamp})
        elif kind == "user" and text and last is not None and last.get("results") \
                and last.get("timestamp") == s.get("at"):  # text beside results (Anthropic)
            last["content"].append({"type": "text", "text": text})
            last["results"] = False
        else:  # system, user, assistant
            out.append({"role": kind, "content": text, **stamp})
    for m in out:
        m.pop("results", None)
    return out


def traces_of(records: Iterable[ExportRecord]) -> list[TraceIn]:
    """The agent runs of an export as they were sent: each trace with its steps (in order)
    written back as chat messages that read into the same steps, and its outcome."""
    records = list(records)
    steps: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.kind == "step":
            steps.setdefault(str(r.properties["trace_id"]), []).append(r.properties)
    fields = ("id", "owner", "agent", "session_id", "task", "started_at", "outcome", "score",
              "detail", "conditions", "feedback")
    out = []
    for r in records:
        if r.kind != "trace":
            continue
        ordered = sorted(steps.get(r.id, []), key=lambda s: int(s["index"]))
        out.append(TraceIn.model_validate({
            **{f: r.properties[f] for f in fields if r.properties.get(f) is not None},
            "messages": _step_messages(ordered)}))
    return out


@dataclass(frozen=True)
class RestoredSection:
    order: int
    level: int
    title: str
    start: int


@dataclass(frozen=True)
class RestoredDocument:
    """One document version of an export, as it is stored again."""

    id: str
    owner: str
    key: str
    version: int
    media_type: str
    text: str
    title: str | None
    source_url: str | None
    metadata: dict[str, Any]
    valid_from: datetime
    recorded_at: datetime
    reason: str | None = None
    recorded_by: str | None = None
    authors: list[str] = field(default_factory=list)
    published: str | None = None
    doi: str | None = None
    sections: list[RestoredSection] = field(default_factory=list)


def _time(value: Any) -> datetime:
    return datetime.fromisoformat(str(value))


def documents_of(records: Iterable[ExportRecord]) -> list[RestoredDocument]:
    """The document versions of an export with their sections, in the order they are stored
    again: by owner and key, each key's versions oldest first."""
    records = list(records)
    sections: dict[str, list[RestoredSection]] = {}
    for r in records:
        if r.kind == "section":
            p = r.properties
            path = p.get("path") or []
            sections.setdefault(str(p["document_id"]), []).append(RestoredSection(
                order=int(p["order"]), level=int(p["level"]),
                title=str(p.get("title") or (path[-1] if path else "")), start=int(p["start"])))
    out = []
    for r in records:
        if r.kind != "document":
            continue
        p = r.properties
        out.append(RestoredDocument(
            id=r.id, owner=str(p["owner"]), key=str(p["key"]), version=int(p["version"]),
            media_type=str(p["media_type"]), text=str(p["text"]), title=p.get("title"),
            source_url=p.get("source_url"), metadata=dict(p.get("metadata") or {}),
            valid_from=_time(p["valid_from"]), recorded_at=_time(p["recorded_at"]),
            reason=p.get("reason"), recorded_by=p.get("recorded_by"),
            authors=list(p.get("authors") or []), published=p.get("published"),
            doi=p.get("doi"),
            sections=sorted(sections.get(r.id, []), key=lambda s: s.order)))
    out.sort(key=lambda d: (d.owner, d.key, d.version))
    return out


_PARAGRAPH = re.compile(r"[^\n]+(?:\n(?!\n)[^\n]*)*")


def parsed_of(doc: RestoredDocument) -> Parsed:
    """The parse of a restored version, as it was: plain text and Markdown parsed again (their
    text is the content as sent); HTML and PDF text read back into its blocks (joined by blank
    lines when extracted), a block where a section starts being that section's heading. The
    metadata recognised then is the version's own (title, authors, date, DOI, URL)."""
    if doc.media_type in REPARSED:
        parsed = parse(doc.text, doc.media_type)
    else:
        heads = {s.start: s for s in doc.sections}
        blocks = []
        for m in _PARAGRAPH.finditer(doc.text):
            head = heads.get(m.start())
            blocks.append(Block("heading", m.start(), m.end(), head.level, head.title)
                          if head is not None else Block("paragraph", m.start(), m.end()))
        parsed = Parsed(doc.text, blocks)
    parsed.title, parsed.url = doc.title, doc.source_url
    parsed.authors, parsed.published, parsed.doi = list(doc.authors), doc.published, doc.doi
    return parsed
