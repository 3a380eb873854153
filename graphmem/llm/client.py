"""Structured completions from any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp).

graphmem is LLM-optional: `LLMSettings.enabled` is False unless a base URL and a model are set,
and callers check it before building an `LLMClient` (which raises `LLMUnavailable` otherwise).

Exceptions (``LLMError`` is a `graphmem.errors.GraphMemError`)::

    LLMError
    ├── LLMUnavailable   503: no endpoint configured (base URL or model missing)
    └── LLMFailure       502: the call failed: retries exhausted, or a non-retryable error
                         (400, 401, 403, 404, ...) at once; ``operation``, ``attempts``,
                         ``last_error`` say which, how often and why

Retried with exponential backoff (``backoff_base_s`` doubled per attempt, ± ``backoff_jitter``,
at most ``backoff_max_s``; a 429's Retry-After header is honoured up to that cap): connection
errors, timeouts, 429 and 5xx. Retried at once, with the bad reply and a correction message
appended to the conversation: a reply that is not JSON or does not validate against the schema.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.chat.completion_create_params import ResponseFormat
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from graphmem.errors import GraphMemError
from graphmem.llm.usage import Usage, UsageLedger, UsageSink

T = TypeVar("T", bound=BaseModel)
JsonMode = Literal["json_object", "json_schema", "none"]

_RETRYABLE = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.RateLimitError,
    openai.InternalServerError,  # any status >= 500
)
_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


class LLMError(GraphMemError):
    """Base class of the errors of graphmem.llm."""

    status = 502
    title = "LLM error"


class LLMUnavailable(LLMError):
    status = 503
    title = "LLM unavailable"


class LLMFailure(LLMError):
    title = "LLM failure"

    def __init__(self, operation: str, attempts: int, last_error: BaseException) -> None:
        tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
        super().__init__(f"LLM operation {operation!r} failed after {tries}: {last_error}")
        self.operation = operation
        self.attempts = attempts
        self.last_error = last_error


class MalformedReply(ValueError):
    """A reply that is not JSON or does not fit the schema (retried; seen as `last_error`)."""


class LLMSettings(BaseModel):
    """Where the LLM is and how to call it. `from_env()` reads ``GRAPHMEM_LLM_*`` variables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:11434/v1")
    api_key: SecretStr | None = Field(default=None, description="None for servers without auth")
    model: str | None = None
    timeout_s: float = Field(default=30.0, gt=0, description="per HTTP attempt")
    max_retries: int = Field(default=3, ge=0, description="attempts = 1 + max_retries")
    json_mode: JsonMode = "json_object"
    temperature: float | None = Field(default=None, description="None: server default")
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=8.0, ge=0)
    backoff_jitter: float = Field(default=0.25, ge=0, le=1, description="fraction of the delay")

    @property
    def enabled(self) -> bool:
        return bool(self.base_url and self.model)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMSettings:
        """Read ``GRAPHMEM_LLM_{BASE_URL,API_KEY,MODEL,TIMEOUT_S,MAX_RETRIES,JSON_MODE}``.

        Unset or empty variables keep the defaults (so no endpoint means `enabled` is False).
        """
        env = os.environ if environ is None else environ
        names = ("base_url", "api_key", "model", "timeout_s", "max_retries", "json_mode")
        values = {n: env.get(f"GRAPHMEM_LLM_{n.upper()}", "").strip() for n in names}
        return cls.model_validate({n: v for n, v in values.items() if v})


class LLMClient:
    """Structured completions with retries and token accounting. Thread-safe.

    ``ledger`` (default: a new `UsageLedger` with ``sink``) receives one `Usage` per call.
    ``sleep`` and ``rng`` are injectable for tests.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        ledger: UsageLedger | None = None,
        sink: UsageSink | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if not settings.enabled or settings.model is None:
            raise LLMUnavailable(
                "no LLM endpoint configured: set GRAPHMEM_LLM_BASE_URL and GRAPHMEM_LLM_MODEL "
                "(check LLMSettings.enabled before building an LLMClient)"
            )
        self.settings = settings
        self.model: str = settings.model
        self.ledger = ledger if ledger is not None else UsageLedger(sink=sink)
        self._sleep = sleep
        self._rng = rng or random.Random()
        key = settings.api_key.get_secret_value() if settings.api_key else ""
        # An explicit placeholder: local servers need no key, and OPENAI_API_KEY must not leak
        # to whatever server base_url names.
        self._openai = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key or "no-key",
            timeout=settings.timeout_s,
            max_retries=0,
        )

    def close(self) -> None:
        self._openai.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def complete_structured(
        self, operation: str, messages: Sequence[Mapping[str, Any]], schema: type[T],
        response_schema: Mapping[str, Any] | None = None,
    ) -> T:
        """Ask for a JSON reply to ``messages`` and validate it into ``schema``.

        ``response_schema`` (default: ``schema``'s JSON schema) is the schema sent in
        ``json_schema`` mode and in corrections: a tighter one than ``schema`` (e.g. the only
        ids a reply may cite) lets a server that constrains its output enforce it, while the
        reply is still validated by ``schema`` (the caller checks the rest and counts it).

        ``operation`` names the call in the usage ledger (e.g. ``"extract_facts"``). Raises
        `LLMFailure` when every attempt failed or on a non-retryable error. Malformed replies
        and transport errors share the ``1 + max_retries`` attempts. With ``json_object`` mode,
        OpenAI answers 400 unless the word "JSON" appears in ``messages``: say it in the prompt.
        """
        conversation: list[dict[str, Any]] = [dict(m) for m in messages]
        attempts = prompt_tokens = completion_tokens = 0
        started = time.monotonic()

        def account(ok: bool) -> None:
            latency_ms = round((time.monotonic() - started) * 1000.0, 1)
            usage = Usage(
                operation, self.model, prompt_tokens, completion_tokens, attempts, latency_ms, ok
            )
            self.ledger.record(usage)

        last_error: BaseException = MalformedReply("no attempt made")
        for attempt in range(1, self.settings.max_retries + 2):
            attempts = attempt
            try:
                completion = self._create(conversation, schema, response_schema)
            except _RETRYABLE as exc:
                last_error = exc
                if attempt <= self.settings.max_retries:
                    self._sleep(self._backoff(attempt, exc))
                continue
            except openai.OpenAIError as exc:  # 400, 401, 404, ...: retrying will not help
                account(ok=False)
                raise LLMFailure(operation, attempts, exc) from exc
            if completion.usage is not None:
                prompt_tokens += completion.usage.prompt_tokens or 0
                completion_tokens += completion.usage.completion_tokens or 0
            content = completion.choices[0].message.content if completion.choices else None
            try:
                result = parse_reply(content, schema)
            except MalformedReply as exc:
                last_error = exc
                conversation.append({"role": "assistant", "content": content or ""})
                conversation.append(
                    {"role": "user", "content": self._correction(exc, schema, response_schema)})
                continue
            account(ok=True)
            return result
        account(ok=False)
        raise LLMFailure(operation, attempts, last_error) from last_error

    def _create(
        self, conversation: list[dict[str, Any]], schema: type[BaseModel],
        response_schema: Mapping[str, Any] | None = None,
    ) -> ChatCompletion:
        response_format: ResponseFormat | openai.Omit = openai.omit
        if self.settings.json_mode == "json_object":
            response_format = {"type": "json_object"}
        elif self.settings.json_mode == "json_schema":
            name = re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64]
            response_format = {
                "type": "json_schema",
                "json_schema": {
                    "name": name,
                    "schema": dict(response_schema or schema.model_json_schema()),
                    "strict": False,
                },
            }
        temperature = self.settings.temperature
        return self._openai.chat.completions.create(
            model=self.model,
            messages=cast("list[ChatCompletionMessageParam]", conversation),
            response_format=response_format,
            temperature=openai.omit if temperature is None else temperature,
        )

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        s = self.settings
        delay = s.backoff_base_s * 2.0 ** (attempt - 1)
        delay *= 1.0 + self._rng.uniform(-s.backoff_jitter, s.backoff_jitter)
        retry_after = _retry_after(exc)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return max(0.0, min(delay, s.backoff_max_s))

    def _correction(self, problem: MalformedReply, schema: type[BaseModel],
                    response_schema: Mapping[str, Any] | None = None) -> str:
        fmt = json.dumps(response_schema or schema.model_json_schema(), separators=(",", ":"))
        return (
            f"Your previous reply could not be used: {problem}. Reply again with only a JSON "
            f"object, no prose and no code fence, matching this JSON schema: {fmt}"
        )


def parse_reply(content: str | None, schema: type[T]) -> T:
    """The JSON in ``content`` (bare, or inside a ```json fenced block) validated into ``schema``.

    Raises `MalformedReply` with a short, model-readable explanation.
    """
    text = (content or "").strip()
    if not text:
        raise MalformedReply("the reply was empty")
    fenced = _FENCED.search(text)
    if fenced and not text.startswith(("{", "[")):
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedReply(f"the reply is not JSON ({exc.msg} at char {exc.pos})") from exc
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise MalformedReply(f"the JSON does not match the schema ({problems})") from exc


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header (numeric form only), if the server sent one."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    value = exc.response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
