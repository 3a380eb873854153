"""From chat messages to steps, and a trace's id and content hash. Pure.

Messages are taken as OpenAI chat messages (``role``, ``content``, ``tool_calls``,
``tool_call_id``, ``name``); other cheap shapes are tolerated: content as a list of parts
(``{"type": "text", "text": ...}``), the legacy ``function_call``, a ``timestamp`` on a message.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from graphmem.errors import InvalidInput
from graphmem.models import utc_datetime
from graphmem.procedural.models import ROLES, Step, TraceIn

READ_VERBS = frozenset({
    "get", "list", "search", "find", "lookup", "look", "read", "fetch", "query", "calculate",
    "compute", "check", "think", "view", "show", "describe", "count", "validate", "verify",
    "retrieve", "browse", "inspect", "peek", "load", "open", "see", "estimate", "preview"})
"""A tool whose name starts with one of these verbs reads; any other tool is taken to write
(to change state), the safe assumption."""
_ERROR = re.compile(r"^\s*(error|exception|traceback)\b|\"error\"\s*:", re.IGNORECASE)
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")


def writes(tool: str) -> bool:
    """Does a tool change state? By its first verb: ``get_user`` reads, ``cancel_order``
    writes, ``searchFlights`` reads."""
    words = [w for w in _WORD_SPLIT.split(tool) if w]
    return not words or words[0].lower() not in READ_VERBS


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts; else ''."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _arguments(raw: Any, where: str) -> tuple[str, list[str]]:
    """The arguments as canonical JSON, and their keys (sorted)."""
    if raw is None or raw == "":
        return "{}", []
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw, []  # kept as sent: a model may emit broken JSON
    elif isinstance(raw, dict):
        value = raw
    else:
        raise InvalidInput(where, "arguments must be a JSON object or a string of one")
    keys = sorted(value) if isinstance(value, dict) else []
    return json.dumps(value, sort_keys=True, ensure_ascii=False), keys


def _call(call: Any, where: str) -> tuple[str, str, list[str], str | None]:
    if not isinstance(call, dict):
        raise InvalidInput(where, "a tool call must be an object")
    fn = call.get("function", call)
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput(f"{where}.function.name", "a tool call needs a function name")
    args, keys = _arguments(fn.get("arguments"), f"{where}.function.arguments")
    cid = call.get("id")
    return name.strip(), args, keys, cid if isinstance(cid, str) else None


def to_steps(messages: list[dict[str, Any]], where: str = "messages",
             max_chars: int = 100_000) -> list[Step]:
    """Every message as one or more steps, in order: a message with text and tool calls gives an
    assistant step, then one step per call. InvalidInput names the offending field."""
    steps: list[Step] = []
    calls: dict[str, str] = {}
    for i, m in enumerate(messages):
        at_ = f"{where}[{i}]"
        role = m.get("role")
        if role not in ROLES:
            raise InvalidInput(f"{at_}.role", f"expected one of {sorted(ROLES)}, got {role!r}")
        text = text_of(m.get("content"))
        if len(text) > max_chars:
            raise InvalidInput(f"{at_}.content", f"{len(text)} characters; at most {max_chars}")
        at = None
        if m.get("timestamp") is not None:
            try:
                at = utc_datetime(m["timestamp"])
            except ValueError as exc:
                raise InvalidInput(f"{at_}.timestamp", str(exc)) from None
        base: dict[str, Any] = {"at": at}
        if role in ("system", "developer"):
            steps.append(Step(index=len(steps), kind="system", text=text, **base))
        elif role == "user":
            steps.append(Step(index=len(steps), kind="user", text=text, **base))
        elif role in ("tool", "function"):
            cid = m.get("tool_call_id")
            name = m.get("name") if isinstance(m.get("name"), str) else calls.get(str(cid))
            steps.append(Step(index=len(steps), kind="tool_result", text=text, tool=name,
                              call_id=cid if isinstance(cid, str) else None,
                              error=bool(_ERROR.search(text)), **base))
        else:
            raw_calls = m.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise InvalidInput(f"{at_}.tool_calls", "must be a list")
            if isinstance(m.get("function_call"), dict):
                raw_calls = [*raw_calls, {"function": m["function_call"]}]
            if text or not raw_calls:
                steps.append(Step(index=len(steps), kind="assistant", text=text, **base))
            for j, call in enumerate(raw_calls):
                name, args, keys, cid = _call(call, f"{at_}.tool_calls[{j}]")
                if cid:
                    calls[cid] = name
                steps.append(Step(index=len(steps), kind="tool_call", tool=name, arguments=args,
                                  arg_keys=keys, call_id=cid, writes=writes(name), **base))
    return steps


def content_hash(t: TraceIn) -> str:
    """What makes a trace the same trace (its outcome is not part of it: that may change)."""
    body = [t.owner, t.agent, t.session_id, t.task, t.started_at.isoformat(),
            json.dumps(t.messages, sort_keys=True, ensure_ascii=False),
            json.dumps(t.conditions, sort_keys=True)]
    return hashlib.sha256(json.dumps(body).encode("utf-8")).hexdigest()


def trace_id(t: TraceIn) -> str:
    """A deterministic id for a trace sent without one: a retry is still stored once."""
    return "tr-" + content_hash(t)[:32]
