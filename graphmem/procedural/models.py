"""Procedural memory, pure pydantic: traces as agents send them, and the cases, clusters and skills
formed from them. No I/O here."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    FiniteFloat,
    Tag,
    WithJsonSchema,
)

from graphmem.models import NAME, Scalar, UtcDatetime

Outcome = Literal["success", "failure", "partial", "unknown"]
StepKind = Literal["system", "user", "assistant", "tool_call", "tool_result"]
Units = Literal["cases", "skills"]

MAX_TRACES = 100
"""Traces per request (each up to ``MAX_MESSAGES`` messages)."""
MAX_MESSAGES = 2000
ROLES = ("system", "developer", "user", "assistant", "tool", "function", "model")
"""The chat roles a trace's messages may have (checked when the trace is read into steps)."""

_TOOL_CALL = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string", "examples": ["function"]},
        "function": {
            "type": "object", "required": ["name"], "additionalProperties": True,
            "properties": {
                "name": {"type": "string", "pattern": r"\S"},
                "arguments": {"anyOf": [{"type": "string"}, {"type": "object"}, {"type": "null"}],
                              "description": "A JSON object, or a string of one"}}}},
    "required": ["function"],
    "additionalProperties": True,
}
ChatMessage = Annotated[dict[str, Any], WithJsonSchema({
    "type": "object",
    "title": "ChatMessage",
    "description": "One message (or item) of the run as the agent produced it: an OpenAI chat "
    "message (role, content, tool_calls, tool_call_id, name, the legacy function_call), an OpenAI "
    "Responses API item (a message, or a function_call / function_call_output / *_call item: "
    "type, call_id, name, arguments, output), an Anthropic message (content blocks text, "
    "tool_use, tool_result) or a Gemini content (role model, parts with text, functionCall, "
    "functionResponse); content may be a string or a list of parts; a timestamp is read too.",
    "properties": {
        "role": {"type": "string", "enum": list(ROLES)},
        "type": {"type": "string", "description": "A Responses API item's type (an item "
                 "without a role: function_call, function_call_output, ...)"},
        "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": {}},
                              {"type": "null"}]},
        "parts": {"type": "array", "items": {}, "description": "Gemini: the content's parts"},
        "tool_calls": {"type": "array", "items": _TOOL_CALL},
        "tool_call_id": {"type": "string"},
        "name": {"type": "string"},
        "function_call": {"type": "object", "required": ["name"],
                          "properties": {"name": {"type": "string", "pattern": r"\S"}}},
        "timestamp": {"type": "string", "format": "date-time",
                      "description": "ISO 8601 with an offset"},
    },
    "additionalProperties": True,
})]
"""One message of a trace: validated when the trace is read into steps (errors name the field,
e.g. ``messages[3].role``); documented here for clients."""


class _In(BaseModel):
    """A request body: no unknown field, no value of another JSON type coerced."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)


class TraceIn(_In):
    """One run of an agent: its messages as they are (OpenAI, Anthropic or Gemini shapes), and
    how it ended."""

    id: str | None = Field(default=None, min_length=1, max_length=200, pattern=NAME,
                           description="Client id; if absent, derived from the content")
    owner: str = Field(min_length=1, max_length=200, pattern=NAME,
                       description="Whose procedural memory this is (e.g. the agent's)")
    agent: str | None = Field(default=None, max_length=200, pattern=NAME)
    session_id: str | None = Field(default=None, max_length=200, pattern=NAME)
    task: str | None = Field(default=None, max_length=2000,
                             description="What the run was asked to do, if the caller knows")
    started_at: UtcDatetime = Field(description="ISO 8601 with an offset; stored in UTC")
    system: str | list[Any] | dict[str, Any] | None = Field(
        default=None, description="The system prompt when the client sends it apart from the "
        "messages (Anthropic's system, Gemini's system_instruction): a string, a list of text "
        "parts, or a content with parts; it becomes the run's first step")
    messages: list[ChatMessage] = Field(
        min_length=1, max_length=MAX_MESSAGES,
        description="The run's messages as the agent produced them: OpenAI chat messages or "
        "Responses API items, Anthropic messages, Gemini contents (see ChatMessage)")
    outcome: Outcome = "unknown"
    score: FiniteFloat | None = None
    detail: str | None = Field(default=None, max_length=20_000)
    conditions: dict[str, Scalar] = Field(
        default_factory=dict, max_length=64,
        description="Under what the run happened (model, tool versions..), up to 64 keys")
    feedback: str | None = Field(default=None, max_length=20_000)


TraceList = Annotated[list[TraceIn], Field(min_length=1, max_length=MAX_TRACES)]
"""Runs of one request: the length is checked before any run is validated."""


class TraceBatch(_In):
    traces: TraceList


def _trace_body_kind(value: Any) -> str:
    return "TraceBatch" if isinstance(value, dict) and "traces" in value else "TraceIn"


TraceBody = Annotated[
    Annotated[TraceBatch, Tag("TraceBatch")] | Annotated[TraceIn, Tag("TraceIn")],
    Discriminator(_trace_body_kind)]
"""What ``POST /v1/traces`` takes: a batch ``{"traces": [...]}`` or one run; a body with
``traces`` is read as a batch only, so its errors are the batch's."""


class OutcomeIn(_In):
    outcome: Outcome
    score: FiniteFloat | None = None
    detail: str | None = Field(default=None, max_length=20_000)
    feedback: str | None = Field(default=None, max_length=20_000)


class OutcomeReport(BaseModel):
    """What recording an outcome changed: the trace's outcome now and before."""

    id: str
    outcome: Outcome
    previous: Outcome | None = None


class TraceReport(BaseModel):
    ids: list[str]
    created: int
    duplicates: int


class Step(BaseModel):
    """One step of a trace: a user turn, an assistant turn, a tool call, or a tool result."""

    index: int
    kind: StepKind
    text: str = ""
    tool: str | None = None
    arguments: str | None = Field(default=None, description="the call's arguments, as JSON")
    arg_keys: list[str] = Field(default_factory=list)
    call_id: str | None = None
    writes: bool | None = Field(default=None, description="tool call that changes state")
    error: bool = False
    at: datetime | None = Field(default=None, description="when, if the message said so")


class Action(BaseModel):
    tool: str
    keys: list[str] = Field(default_factory=list, description="argument keys, sorted")
    writes: bool
    slots: dict[str, str] = Field(
        default_factory=dict, description="what the call passed as typed slots: argument path "
        "-> type (user id, reservation id, date, ...), never the values")
    checked: list[str] = Field(
        default_factory=list, description="for a write: the earlier reads of its case that "
        "passed one of its values, as read_tool:slot type (the same reservation looked up)")


class Case(BaseModel):
    """One attempt at one request, derived from a stretch of a trace's steps."""

    id: str
    owner: str
    trace_id: str
    intent: str = Field(description="the request, normalised")
    masked_intent: str = Field(default="", description="the request with every identifier "
                               "masked (<user id>, <date>, <name>): what skills show of it")
    request: str = Field(description="every user turn of the stretch, joined")
    actions: list[Action]
    writes: list[str] = Field(description="the tools called that change state, in order")
    entities: list[str] = Field(default_factory=list,
                                description="ids, codes, numbers named, and values written")
    outcome: Outcome
    conditions: dict[str, Scalar] = Field(default_factory=dict)
    occurred_at: datetime
    quality: float
    quality_reason: str
    filtered: bool = Field(description="left out of clustering and skills (stays stored)")
    step_ids: list[str] = Field(default_factory=list)
    summary: str | None = Field(default=None, description="written by the LLM path, if used")
    lessons: list[str] = Field(default_factory=list, description="LLM path: what to repeat or "
                               "avoid, grounded in the actions and the outcome")
    cluster: str | None = None
    skill: str | None = None
    score: float | None = None


class SkillStep(BaseModel):
    tool: str
    keys: list[str] = Field(default_factory=list, description="argument keys the cases share")
    writes: bool
    support: int = Field(description="successful cases that made this call")
    slots: dict[str, str] = Field(default_factory=dict, description="the typed slots every "
                                  "such call passed: argument path -> type (never a value)")


class Precondition(BaseModel):
    """A read the successful runs made before a write: what to check first."""

    before: str = Field(description="the write it precedes")
    read: str = Field(description="the tool that reads")
    same: list[str] = Field(default_factory=list, description="slot types the read passed "
                            "with the same value as the write (the same reservation id)")
    support: int = Field(description="successful cases that read it before the write")
    of: int = Field(description="successful cases that made the write")


class CounterEvidence(BaseModel):
    """What failed runs of the skill's kind did differently from its successful runs."""

    what: str
    kind: Literal["extra_write", "missing_write", "no_change", "skipped_check", "other_slots",
                  "repeated_write", "same_steps"]
    count: int = Field(description="failed runs that did it")
    of: int = Field(description="failed runs of the skill's kind")
    cases: list[str] = Field(default_factory=list, description="those runs' cases (at most 20)")


class CaseMatch(BaseModel):
    """One case behind a recommended skill: its request, how it ended, how close it is."""

    id: str
    intent: str = Field(description="its request, identifiers masked")
    outcome: Outcome
    similarity: float | None = Field(default=None, description="cosine of the request to "
                                     "this case's request (identifiers masked in both)")


class Recommendation(BaseModel):
    """Why a skill came up for a request."""

    similarity: float | None = Field(default=None, description="cosine of the request to the "
                                     "skill's requests (their mean; identifiers masked)")
    words: list[str] = Field(default_factory=list, description="the request's words that "
                             "name what the skill's writes do")
    ranks: dict[str, int] = Field(default_factory=dict, description="its rank in each list "
                                  "fused (vector, fulltext, action)")
    successes: int = 0
    failures: int = 0
    cases: list[CaseMatch] = Field(default_factory=list, description="its best supporting cases")


class Skill(BaseModel):
    """A method learned from successful cases: evidence under the conditions seen, not proof."""

    id: str
    lineage: str = Field(description="the same skill across versions")
    version: int
    owner: str
    name: str
    description: str
    when_to_use: str
    steps: list[SkillStep]
    pitfalls: list[str] = Field(default_factory=list)
    successes: int
    failures: int
    conditions: dict[str, list[str]] = Field(default_factory=dict)
    flagged: bool = False
    flag_reason: str | None = None
    written_by: str = Field(default="consensus", description="consensus (no LLM) or llm")
    method: str | None = Field(default=None, description="the tools that change state, sorted")
    cluster: str | None = Field(default=None, description="the cluster most of its cases are in")
    valid_from: datetime
    valid_to: datetime | None = None
    recorded_at: datetime
    invalidated_at: datetime | None = None
    score: float | None = None
    cases: list[Case] = Field(default_factory=list, description="its best supporting cases")
    preconditions: list[Precondition] = Field(
        default_factory=list, description="the reads its successful runs made before writing")
    counter_evidence: list[CounterEvidence] = Field(
        default_factory=list, description="what failed runs of its kind did differently, with "
        "counts (all kept)")
    why: Recommendation | None = Field(default=None, description="on a search: why it came up")
    text: str = Field(default="", description="the skill compactly, as a prompt gets it: steps "
                      "with their slots, preconditions, counter-evidence")


class SkillSupersession(BaseModel):
    by: str
    of: str
    at: datetime
    reason: str
    sources: list[str] = Field(default_factory=list)


class SkillHistory(BaseModel):
    skills: list[Skill]
    supersessions: list[SkillSupersession]


class SkillDetail(BaseModel):
    skill: Skill
    supporting: list[Case]
    contradicting: list[Case]


class CaseDetail(BaseModel):
    case: Case
    steps: list[Step]
    trace: dict[str, Any]


class SkillSearch(_In):
    query: str = Field(min_length=1, max_length=4000)
    owner: str = Field(min_length=1, max_length=200, pattern=NAME)
    units: Units = "skills"
    k: int = Field(default=5, ge=1, le=100)
    cases_per_skill: int = Field(default=3, ge=0, le=20)
    as_of: UtcDatetime | None = Field(default=None, description="skills valid at this time")
    known_at: UtcDatetime | None = Field(
        default=None, description="skills as recorded by this time (before later revisions)")


class SkillSearchResult(BaseModel):
    query: str
    units: Units
    skills: list[Skill] = Field(default_factory=list, description="best first")
    cases: list[Case] = Field(default_factory=list, description="best first")


class FormReport(BaseModel):
    owner: str
    cases: int = 0
    clusters: int = 0
    skills_created: int = 0
    skills_revised: int = 0
    skills_unchanged: int = 0
    flagged: int = 0
    llm: dict[str, Any] = Field(default_factory=dict,
                                description="LLM calls used, and each fallback with its reason")
