"""From chat messages to steps, and a trace's id and content hash. Pure.

Messages are read in the shapes agents produce, as they are:
* OpenAI Chat Completions: ``role``, ``content``, ``tool_calls``, ``tool_call_id``, ``name`` (and
  the legacy ``function_call``; a call's ``args`` as LangChain's ``AIMessage.tool_calls`` has
  them);
* OpenAI Responses API items: ``{"type": "message", "role", "content"}``, ``function_call`` /
  ``function_call_output`` (linked by ``call_id``), ``custom_tool_call``, ``mcp_call``, the
  built-in tools' ``*_call`` items (``web_search_call`` is the tool ``web_search``); ``reasoning``
  items give no step;
* Anthropic Messages: content blocks ``text``, ``tool_use`` / ``server_tool_use`` /
  ``mcp_tool_use`` (``input``) and ``tool_result`` (in a user message; ``is_error``) or a server
  tool's ``*_tool_result``; ``thinking`` gives no step;
* Gemini: ``role`` ``model``, ``parts`` with ``text``, ``functionCall`` and ``functionResponse``.
Content may be a string or a list of parts (their ``text``); a message may carry a ``timestamp``.
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
BUILT_IN_READS = frozenset({"web_search", "file_search", "web_fetch"})
"""Providers' built-in tools that read (OpenAI's ``web_search_call`` and ``file_search_call``
items, Anthropic's server tools), though their first word is no reading verb."""
_ERROR = re.compile(r"^\s*(error|exception|traceback)\b|\"error\"\s*:", re.IGNORECASE)
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")
_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_SKIPPED_ITEMS = frozenset({"reasoning", "item_reference", "compaction"})
"""Responses API items that are no step of the run (the model's hidden reasoning, references)."""


def writes(tool: str) -> bool:
    """Does a tool change state? By its first verb: ``get_user`` reads, ``cancel_order``
    writes, ``searchFlights`` reads."""
    if tool in BUILT_IN_READS:
        return False
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


def _result_text(content: Any) -> str:
    """A tool's result as text: a string, the text parts of a list, or other JSON as JSON."""
    if content is None or isinstance(content, (str, list)):
        return text_of(content)
    return json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)


def _arguments(raw: Any, where: str) -> tuple[str, list[str]]:
    """The arguments as canonical JSON, and their keys (sorted)."""
    if raw is None or raw == "":
        return "{}", []
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw, []  # kept as sent: a model may emit broken JSON (or free-form input)
    elif isinstance(raw, dict):
        value = raw
    else:
        raise InvalidInput(where, "arguments must be a JSON object or a string of one")
    keys = sorted(value) if isinstance(value, dict) else []
    return json.dumps(value, sort_keys=True, ensure_ascii=False), keys


class _Reader:
    """Steps in order, with what links a tool result to its call (the call's id)."""

    def __init__(self, max_chars: int) -> None:
        self.steps: list[Step] = []
        self.calls: dict[str, str] = {}
        self.max_chars = max_chars

    def add(self, kind: str, where: str, text: str = "", **fields: Any) -> None:
        if len(text) > self.max_chars:
            raise InvalidInput(where, f"{len(text)} characters; at most {self.max_chars}")
        self.steps.append(Step(index=len(self.steps), kind=kind, text=text,  # type: ignore[arg-type]
                               **fields))

    def call(self, name: Any, raw_args: Any, cid: Any, where: str, at: Any,
             args_at: str) -> None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput(where, "a tool call needs a name")
        args, keys = _arguments(raw_args, args_at)
        cid = cid if isinstance(cid, str) and cid else None
        if cid:
            self.calls[cid] = name.strip()
        self.add("tool_call", where, tool=name.strip(), arguments=args, arg_keys=keys,
                 call_id=cid, writes=writes(name.strip()), at=at)

    def result(self, content: Any, cid: Any, where: str, at: Any, name: Any = None,
               error: bool | None = None) -> None:
        text = _result_text(content)
        cid = cid if isinstance(cid, str) and cid else None
        tool = name if isinstance(name, str) and name else self.calls.get(str(cid))
        self.add("tool_result", where, text, tool=tool, call_id=cid,
                 error=bool(_ERROR.search(text)) if error is None else error, at=at)


def _timestamp(m: dict[str, Any], where: str) -> Any:
    if m.get("timestamp") is None:
        return None
    try:
        return utc_datetime(m["timestamp"])
    except ValueError as exc:
        raise InvalidInput(f"{where}.timestamp", str(exc)) from None


def _item(r: _Reader, m: dict[str, Any], kind: Any, at_: str, at: Any) -> None:
    """A Responses API item that is not a message (it has no role)."""
    if not isinstance(kind, str):
        raise InvalidInput(f"{at_}.type", f"expected a string, got {kind!r}")
    if kind in _SKIPPED_ITEMS:
        return
    if kind in ("function_call", "custom_tool_call"):
        raw = m.get("arguments") if kind == "function_call" else m.get("input")
        r.call(m.get("name"), raw, m.get("call_id"), f"{at_}.name", at, f"{at_}.arguments")
    elif kind == "mcp_call":
        r.call(m.get("name"), m.get("arguments"), m.get("id"), f"{at_}.name", at,
               f"{at_}.arguments")
        if m.get("output") is not None or m.get("error") is not None:
            r.result(m.get("output") if m.get("error") is None else m.get("error"), m.get("id"),
                     f"{at_}.output", at, error=m.get("error") is not None)
    elif kind.endswith("_call_output"):
        r.result(m.get("output"), m.get("call_id"), f"{at_}.output", at)
    elif kind.endswith("_call") and kind != "_call":
        raw = m.get("action", m.get("arguments"))
        r.call(kind[:-len("_call")], raw if isinstance(raw, (dict, str)) else None,
               m.get("call_id") or m.get("id"), f"{at_}.type", at, f"{at_}.action")
    else:
        raise InvalidInput(f"{at_}.role", f"expected one of {sorted(ROLES)} (or a Responses "
                           f"API item type), got {m.get('role')!r}")


def _calls_tool(b: dict[str, Any]) -> bool:
    """An Anthropic tool-use block or a Gemini function-call part."""
    kind = b.get("type")
    return ((isinstance(kind, str) and kind in _CALL_BLOCKS)
            or isinstance(b.get("functionCall", b.get("function_call")), dict))


def _blocks(r: _Reader, content: Any, at_: str, at: Any) -> None:
    """The tool calls and tool results among a message's content blocks (Anthropic) or parts
    (Gemini), in order. ``at_``: where the list is (``messages[3].content``)."""
    if not isinstance(content, list):
        return
    for j, b in enumerate(content):
        if not isinstance(b, dict):
            continue
        where = f"{at_}[{j}]"
        kind = b.get("type") if isinstance(b.get("type"), str) else None
        if kind in _CALL_BLOCKS:
            r.call(b.get("name"), b.get("input"), b.get("id"), f"{where}.name", at,
                   f"{where}.input")
        elif kind is not None and kind.endswith("tool_result"):
            r.result(b.get("content"), b.get("tool_use_id"), where, at,
                     error=True if b.get("is_error") else None)
        elif isinstance(fn := b.get("functionCall", b.get("function_call")), dict):
            r.call(fn.get("name"), fn.get("args"), fn.get("id"), f"{where}.functionCall.name",
                   at, f"{where}.functionCall.args")
        elif isinstance(fr := b.get("functionResponse", b.get("function_response")), dict):
            r.result(fr.get("response"), fr.get("id"), where, at, name=fr.get("name"))


def to_steps(messages: list[dict[str, Any]], where: str = "messages",
             max_chars: int = 100_000) -> list[Step]:
    """Every message as one or more steps, in order: a message with text and tool calls gives an
    assistant step, then one step per call; a user message carrying tool results (Anthropic)
    gives those results, then a user step only if it also has text. InvalidInput names the
    offending field."""
    r = _Reader(max_chars)
    _read(r, messages, where)
    return r.steps


def _read(r: _Reader, messages: list[dict[str, Any]], where: str) -> None:
    """`to_steps`'s reading, onto the steps ``r`` already holds."""
    for i, m in enumerate(messages):
        at_ = f"{where}[{i}]"
        at = _timestamp(m, at_)
        role = m.get("role")
        if role is None and m.get("type") not in (None, "message"):
            _item(r, m, m.get("type"), at_, at)
            continue
        if role not in ROLES:
            raise InvalidInput(f"{at_}.role", f"expected one of {sorted(ROLES)}, got {role!r}")
        key = "content" if "content" in m else "parts"  # Gemini: parts
        content, blocks_at = m.get(key), f"{at_}.{key}"
        text = text_of(content)
        if len(text) > r.max_chars:
            raise InvalidInput(blocks_at, f"{len(text)} characters; at most {r.max_chars}")
        if role in ("system", "developer"):
            r.add("system", at_, text, at=at)
        elif role in ("tool", "function"):
            before = len(r.steps)
            if isinstance(content, list) and not isinstance(m.get("tool_call_id"), str):
                _blocks(r, content, blocks_at, at)  # Gemini's function responses
            if len(r.steps) == before:
                r.result(content, m.get("tool_call_id"), blocks_at, at, name=m.get("name"))
        elif role == "user":
            before = len(r.steps)
            _blocks(r, content, blocks_at, at)
            if text or len(r.steps) == before:
                r.add("user", at_, text, at=at)
        else:  # assistant, model
            raw_calls = m.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise InvalidInput(f"{at_}.tool_calls", "must be a list")
            if isinstance(m.get("function_call"), dict):
                raw_calls = [*raw_calls, {"function": m["function_call"]}]
            has_blocks = isinstance(content, list) and any(
                isinstance(b, dict) and _calls_tool(b) for b in content)
            if text or not (raw_calls or has_blocks):
                r.add("assistant", at_, text, at=at)
            for j, call in enumerate(raw_calls):
                if not isinstance(call, dict):
                    raise InvalidInput(f"{at_}.tool_calls[{j}]", "a tool call must be an object")
                fn = call.get("function", call)
                fn = fn if isinstance(fn, dict) else {}
                w = f"{at_}.tool_calls[{j}].function"
                raw = fn.get("arguments", fn.get("args"))  # args: LangChain's AIMessage
                r.call(fn.get("name"), raw, call.get("id"), f"{w}.name", at, f"{w}.arguments")
            _blocks(r, content, blocks_at, at)


def trace_steps(t: TraceIn, where: str = "messages", max_chars: int = 100_000) -> list[Step]:
    """A trace's steps (`to_steps`), after its system prompt when sent apart; InvalidInput also
    when no user turn says what was asked. ``where``: the messages' field (``traces[0].messages``);
    the system prompt's is its sibling."""
    r = _Reader(max_chars)
    if t.system is not None:
        system = t.system.get("parts") if isinstance(t.system, dict) else t.system
        field = where.rpartition(".")[0] + ".system" if "." in where else "system"
        r.add("system", field, text_of(system))
    _read(r, t.messages, where)
    if not any(s.kind == "user" for s in r.steps):
        raise InvalidInput(where, "a trace needs at least one user message")
    return r.steps


def content_hash(t: TraceIn) -> str:
    """What makes a trace the same trace (its outcome is not part of it: that may change)."""
    body = [t.owner, t.agent, t.session_id, t.task, t.started_at.isoformat(),
            json.dumps(t.messages, sort_keys=True, ensure_ascii=False),
            json.dumps(t.conditions, sort_keys=True)]
    if t.system is not None:  # only then: the ids of runs sent without one stay as they were
        body.append(json.dumps(t.system, sort_keys=True, ensure_ascii=False))
    return hashlib.sha256(json.dumps(body).encode("utf-8")).hexdigest()


def trace_id(t: TraceIn) -> str:
    """A deterministic id for a trace sent without one: a retry is still stored once."""
    return "tr-" + content_hash(t)[:32]
