"""Where one request ends and the next begins inside a trace. Pure, no LLM.

A new stretch (a future case) starts at a user turn that
* carries an explicit task marker ("new task", "next question", "unrelated, but ..."), or
* follows a long pause (over `PAUSE`, when messages carry timestamps), or
* shifts intent: the stretch so far already changed state (a write call), the turn asks for
  something (a request phrase) without answering or continuing ("yes, please ...", "let's ..."),
  and it is unlike the stretch's request (cosine of their vectors
  under `SHIFT_COSINE`; only when vectors are given).
A conversation that merely goes on about its request (answers, confirmations, "also ...") stays one
stretch: within one task, turns legitimately move between sub-requests.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from datetime import timedelta

from graphmem.procedural.models import Step

PAUSE = timedelta(minutes=30)
SHIFT_COSINE = 0.1
MARKER = re.compile(
    r"^\W*(new task|next task|task\s*\d*\s*:|new (question|request|topic)|next (question|"
    r"request)|(something|a question) (else|unrelated)|unrelated(ly)?\b|different (question|"
    r"topic|request)|moving on\b|on another (note|topic))", re.IGNORECASE)
CONTINUATION = re.compile(r"^\W*(yes|yeah|yep|no|nope|ok(ay)?|sure|fine|great|thanks|thank you|"
                          r"let'?s|go ahead|please (proceed|go|do)|i (agree|confirm)|"
                          r"that|this|it|and|also|but|then|so|option)\b", re.IGNORECASE)
"""A turn that answers or continues the conversation is never an intent shift."""
REQUEST = re.compile(r"\b(i want|i'd like|i would like|i need|can you|could you|please|help "
                     r"me|how (do|can) i)\b", re.IGNORECASE)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def boundaries(steps: Sequence[Step], vectors: dict[int, list[float]] | None = None) -> list[int]:
    """Indices (into ``steps``) where a stretch starts; always starts with 0 for a non-empty
    trace. ``vectors``: step index -> embedding of that user turn (optional)."""
    if not steps:
        return []
    starts = [0]
    request: int | None = None  # the current stretch's first user turn
    wrote = False
    last_at = None
    for i, s in enumerate(steps):
        if s.kind == "user":
            new = False
            if request is not None:
                paused = (s.at is not None and last_at is not None and s.at - last_at > PAUSE)
                marked = bool(MARKER.search(s.text))
                shifted = (wrote and vectors is not None and bool(REQUEST.search(s.text))
                           and not CONTINUATION.search(s.text)
                           and i in vectors and request in vectors
                           and cosine(vectors[i], vectors[request]) < SHIFT_COSINE)
                new = paused or marked or shifted
            if new:
                starts.append(i)
                wrote = False
            if new or request is None:
                request = i
        elif s.kind == "tool_call" and s.writes:
            wrote = True
        if s.at is not None:
            last_at = s.at
    return starts


def stretches(steps: Sequence[Step], starts: Sequence[int]) -> list[list[Step]]:
    """The steps cut at ``starts`` (steps before the first start, e.g. the system prompt, go with
    the first stretch)."""
    cuts = [0, *[s for s in starts if s > 0], len(steps)]
    return [list(steps[a:b]) for a, b in itertools.pairwise(cuts) if b > a]
