"""An owner's export (`graphmem.lifecycle.export`) stored again: the requests that store
its messages and agent runs as they were sent (`messages_of`, `traces_of`: each run's steps
written back as chat messages that read into the same steps). Its facts are restored as recorded by
`graphmem.facts.restore`; the other kinds are formed again by the jobs. Pure, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphmem.lifecycle.export import ExportRecord
from graphmem.models import MessageIn
from graphmem.procedural.models import TraceIn

STORED_AGAIN = ("message", "fact", "trace", "step")
"""The kinds an export stores again: what callers sent (`messages_of`, `traces_of`) and the
facts as recorded (`graphmem.facts.restore`). The other kinds were formed from them (episodes,
entities, cases, clusters, skills) and are formed again by the jobs."""


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
