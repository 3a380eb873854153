"""Optional LLM features of graphmem: one client for any OpenAI-compatible server.

graphmem works without an LLM. Check `LLMSettings.enabled` before building an `LLMClient`::

    settings = LLMSettings.from_env()
    if settings.enabled:
        with LLMClient(settings) as llm:
            facts = llm.complete_structured("extract_facts", messages, Facts)
"""

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
from graphmem.llm.usage import Usage, UsageLedger, UsageSink, UsageTotal

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
