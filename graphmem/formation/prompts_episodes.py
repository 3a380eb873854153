"""Prompts of the LLM path of episode formation: boundaries in a window, and an episode's title
and narrative. Plain functions building chat messages; replies are validated by pydantic models
in `graphmem.formation.llm_episodes`. Each system prompt carries one worked example (input and
answer) so that small models see the exact reply format."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem.formation.observer import Turn
from graphmem.messages import temporal
from graphmem.retrieval.context import prompt_safe

BOUNDARY_SYSTEM = """You segment a conversation into episodes: coherent stretches about one \
topic or event. You see a window of numbered messages. Messages before the line "--- new ---" \
are context, already segmented. For the messages after it, say at which numbers a NEW episode \
starts (a change of topic, a new event, a long pause). Most windows have zero or one boundary.

Example. For this window:
0. [2023-06-02 18:10] Joanna: I finally finished the first draft of my screenplay!
1. [2023-06-02 18:11] Nate: That's huge, congrats! What is it about?
--- new ---
2. [2023-06-02 18:12] Joanna: A road trip across Iceland, told by two sisters.
3. [2023-06-02 18:14] Nate: By the way, my team won the Tokyo tournament yesterday.
4. [2023-06-02 18:15] Joanna: Wow, well done! Which game was it?
the answer is {"boundaries": [3]}: message 3 starts a new topic.

Answer with JSON only, listing message numbers after "--- new ---": {"boundaries": [...]}, \
or {"boundaries": []} when the topic does not change."""

NARRATIVE_SYSTEM = """You write the memory of one episode of a conversation: a short title \
(at most 12 words) and a narrative of 1-4 sentences in the third person that keeps every concrete \
fact: names, places, numbers, and dates. Dates in brackets after a time expression are resolved; \
write the resolved date. Do not invent anything.

Example. For these messages:
0. [2023-06-02 18:12] Nate: My team won the Tokyo tournament yesterday [2023-06-01].
1. [2023-06-02 18:13] Joanna: Wow, well done! Which game was it?
2. [2023-06-02 18:14] Nate: Street Fighter. I beat the champion in the final.
the answer is {"title": "Nate wins the Tokyo tournament", "narrative": "On 2023-06-01 Nate's \
team won a Street Fighter tournament in Tokyo; Nate beat the champion in the final. Joanna \
congratulated him."}

Answer with JSON only, about the messages you are given: {"title": "...", "narrative": "..."}"""


def _line(n: int, t: Turn) -> str:
    text = temporal.annotate(t.text, t.timestamp)
    return prompt_safe(f"{n}. [{t.timestamp:%Y-%m-%d %H:%M}] {t.speaker}: {text}")


def boundary_messages(window: Sequence[Turn], first_new: int) -> list[dict[str, str]]:
    lines = []
    for n, t in enumerate(window):
        if n == first_new and first_new > 0:
            lines.append("--- new ---")
        lines.append(_line(n, t))
    return [{"role": "system", "content": BOUNDARY_SYSTEM},
            {"role": "user", "content": "\n".join(lines)}]


def narrative_messages(turns: Sequence[Turn]) -> list[dict[str, str]]:
    body = "\n".join(_line(n, t) for n, t in enumerate(turns))
    return [{"role": "system", "content": NARRATIVE_SYSTEM}, {"role": "user", "content": body}]
