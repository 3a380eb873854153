"""One example request body per operation that takes a body, keyed like the OpenAPI document:
``(method, path)``. `openapi.document` puts each on its operation (``/docs`` fills "Try it out"
with it); a test validates every one against the operation's own request model, so an example
never drifts from what the server accepts, and fails for an operation that has none.
"""

from __future__ import annotations

from typing import Any

_QUESTION = {"query": "where does alice live?", "owner": "alice"}

EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/v1/messages"): {"messages": [
        {"id": "s1-1", "owner": "alice", "session_id": "s1", "speaker": "alice", "role": "user",
         "text": "I moved to Lisbon last month.", "timestamp": "2026-03-12T14:05:00+01:00"},
        {"owner": "alice", "session_id": "s1", "speaker": "assistant", "role": "assistant",
         "text": "Congratulations! How do you like it so far?",
         "timestamp": "2026-03-12T14:05:20+01:00", "metadata": {"channel": "chat"}},
    ]},
    ("post", "/v1/search"): {**_QUESTION, "k": 5, "expand": {"before": 1, "after": 2},
                             "method": "rrf_expand"},
    ("post", "/v1/context"): {**_QUESTION, "max_tokens": 1000},
    ("post", "/v1/answer"): {**_QUESTION},
    ("post", "/v1/documents"): {
        "owner": "alice", "key": "handbook/onboarding.md", "media_type": "text/markdown",
        "content": "# Onboarding\n\nBadges are handed out at the front desk on your first day."},
    ("post", "/v1/documents/search"): {"query": "where do I get my badge?", "owner": "alice",
                                       "k": 5},
    ("post", "/v1/observations"): {"observations": [
        {"owner": "alice", "subject": "alice", "type": "lives_in", "content": "Lisbon",
         "valid_from": "2026-02-01T00:00:00Z", "explicit": True, "confidence": 0.9,
         "cardinality": "single", "reason": "she said she moved there last month"},
    ]},
    ("post", "/v1/profile/ops"): {"ops": [
        {"op": "ADD", "owner": "alice", "key": "home city", "value": "Lisbon", "explicit": True},
    ]},
    ("post", "/v1/traces"): {"traces": [
        {"owner": "alice", "agent": "deploy-bot", "task": "roll back the failed release",
         "started_at": "2026-03-12T14:05:00Z", "outcome": "success",
         "messages": [
             {"role": "user", "content": "The release r1 broke checkout, roll it back."},
             {"role": "assistant", "content": "Rolled back to r0; checkout works again."},
         ]},
    ]},
    ("post", "/v1/traces/{trace_id}/outcome"): {"outcome": "failure", "score": 0.0,
                                                "detail": "the rollback left a lock behind"},
    ("post", "/v1/episodes/retry-extraction"): {"status": "all_dropped", "owner": "alice"},
    ("post", "/v1/skills/search"): {"query": "roll back a release", "owner": "alice", "k": 3},
    ("post", "/v1/messages/forget"): {"owner": "alice", "metadata": {"source": "gmail"}},
}
