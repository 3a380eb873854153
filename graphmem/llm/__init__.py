"""Optional LLM features of graphmem: one client for any OpenAI-compatible server.

graphmem works without an LLM. Check `LLMSettings.enabled` before building an `LLMClient`::

    settings = LLMSettings.from_env()
    if settings.enabled:
        with LLMClient(settings) as llm:
            facts = llm.complete_structured("extract_facts", messages, Facts)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from graphmem.llm.usage import Usage, UsageLedger, UsageSink, UsageTotal

if TYPE_CHECKING:  # the client (and so `openai`) loads on first use, see __getattr__
    from graphmem.llm.client import (
        JsonMode,
        LLMClient,
        LLMError,
        LLMFailure,
        LLMSettings,
        LLMUnavailable,
        MalformedReply,
        parse_reply,
    )

_CLIENT = {"JsonMode", "LLMClient", "LLMError", "LLMFailure", "LLMSettings", "LLMUnavailable",
           "MalformedReply", "parse_reply"}

__all__ = [
    "JsonMode",
    "LLMClient",
    "LLMError",
    "LLMFailure",
    "LLMSettings",
    "LLMUnavailable",
    "MalformedReply",
    "Usage",
    "UsageLedger",
    "UsageSink",
    "UsageTotal",
    "parse_reply",
]


def __getattr__(name: str) -> Any:
    """The client's names load `graphmem.llm.client` (and `openai`) only when first used, so the
    usage models (`graphmem.wire`) import without it."""
    if name not in _CLIENT:
        raise AttributeError(f"module 'graphmem.llm' has no attribute {name!r}")
    return getattr(import_module("graphmem.llm.client"), name)
