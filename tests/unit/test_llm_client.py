"""Unit tests of graphmem.llm: structured replies, retries, failures, usage accounting, settings.

The LLM side is `ScriptedOpenAIServer`, an in-process HTTP test double (tests/support); the real
``openai`` client talks to it over loopback TCP. No external service, no model.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from graphmem.errors import GraphMemError
from graphmem.llm import (
    LLMClient,
    LLMFailure,
    LLMSettings,
    LLMUnavailable,
    MalformedReply,
    Usage,
    UsageLedger,
    parse_reply,
)
from tests.support.scripted_openai import (
    DEFAULT_COMPLETION_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    ScriptedOpenAIServer,
)


class Fact(BaseModel):
    subject: str
    predicate: str
    object: str


class Facts(BaseModel):
    facts: list[Fact]


GOOD = {"facts": [{"subject": "Ana", "predicate": "lives_in", "object": "Lisbon"}]}
PROMPT = [
    {"role": "system", "content": "Extract facts as JSON: {facts: [{subject, predicate, object}]}"},
    {"role": "user", "content": "Ana moved to Lisbon last spring."},
]




class Sleeps(list[float]):
    """Records backoff delays instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(srv: ScriptedOpenAIServer, **over: Any) -> LLMClient:
    values: dict[str, Any] = {
        "base_url": srv.base_url,
        "model": "scripted-model",
        "api_key": "test-key",
        "timeout_s": 5.0,
        "max_retries": 2,
        "backoff_base_s": 0.001,
        "backoff_max_s": 0.01,
    }
    sleep = over.pop("sleep", time.sleep)
    return LLMClient(LLMSettings(**(values | over)), sleep=sleep)


# --- the happy path and what is sent ---------------------------------------------------------


def test_structured_reply_is_parsed(srv: ScriptedOpenAIServer) -> None:
    srv.reply_json(GOOD)
    with make_client(srv) as llm:
        facts = llm.complete_structured("extract_facts", PROMPT, Facts)
    assert facts == Facts.model_validate(GOOD)


SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "Facts", "schema": Facts.model_json_schema(), "strict": False},
}


@pytest.mark.parametrize(
    ("json_mode", "response_format"),
    [("json_object", {"type": "json_object"}), ("json_schema", SCHEMA_FORMAT), ("none", None)],
)
def test_request_carries_prompt_model_and_format(
    srv: ScriptedOpenAIServer, json_mode: str, response_format: dict[str, Any] | None
) -> None:
    srv.reply_json(GOOD)
    make_client(srv, json_mode=json_mode).complete_structured("extract_facts", PROMPT, Facts)
    (body,) = srv.requests
    assert (body["model"], body["messages"]) == ("scripted-model", PROMPT)
    assert body.get("response_format") == response_format
    assert "temperature" not in body
    assert srv.headers[0]["authorization"] == "Bearer test-key"


def test_temperature_is_sent_and_openai_api_key_is_not(
    srv: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    srv.reply_json(GOOD)
    make_client(srv, api_key=None, temperature=0.0).complete_structured("op", PROMPT, Facts)
    assert srv.requests[0]["temperature"] == 0.0
    assert srv.headers[0]["authorization"] == "Bearer no-key"


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"facts": []}\n```',
        'Here you go:\n```\n{"facts": []}\n```\nAnything else?',
        '  {"facts": []}\n',
    ],
)
def test_fenced_or_padded_json_is_accepted(content: str) -> None:
    assert parse_reply(content, Facts) == Facts(facts=[])


@pytest.mark.parametrize(
    ("content", "problem"),
    [(None, "empty"), ("", "empty"), ("sure!", "not JSON"), ('{"facts": 3}', "facts")],
)
def test_parse_reply_explains_the_problem(content: str | None, problem: str) -> None:
    with pytest.raises(MalformedReply, match=problem):
        parse_reply(content, Facts)


# --- malformed replies -----------------------------------------------------------------------


def test_reply_that_is_not_json_is_retried_with_a_correction(srv: ScriptedOpenAIServer) -> None:
    srv.reply_text("Sure! Ana lives in Lisbon.")
    srv.reply_json(GOOD)
    sleeps = Sleeps()
    facts = make_client(srv, sleep=sleeps).complete_structured("extract_facts", PROMPT, Facts)
    assert facts == Facts.model_validate(GOOD)
    assert sleeps == []  # the server is healthy: no backoff
    retry = srv.requests[1]["messages"]
    assert retry[:2] == PROMPT
    assert retry[2] == {"role": "assistant", "content": "Sure! Ana lives in Lisbon."}
    assert retry[3]["role"] == "user"
    assert "not JSON" in retry[3]["content"]
    assert '"predicate"' in retry[3]["content"]  # the schema is restated


def test_json_failing_validation_is_retried_with_the_field_named(
    srv: ScriptedOpenAIServer,
) -> None:
    srv.reply_json({"facts": [{"subject": "Ana", "object": "Lisbon"}]})
    srv.reply_json(GOOD)
    facts = make_client(srv).complete_structured("extract_facts", PROMPT, Facts)
    assert facts.facts[0].predicate == "lives_in"
    correction = srv.requests[1]["messages"][-1]["content"]
    assert "facts.0.predicate: Field required" in correction


def test_persistent_malformed_replies_fail_after_max_attempts(srv: ScriptedOpenAIServer) -> None:
    srv.default(text="I cannot do JSON today.")
    llm = make_client(srv, max_retries=2)
    with pytest.raises(LLMFailure) as info:
        llm.complete_structured("extract_facts", PROMPT, Facts)
    failure = info.value
    assert (failure.operation, failure.attempts) == ("extract_facts", 3)
    assert isinstance(failure.last_error, MalformedReply)
    assert "'extract_facts' failed after 3 attempts: the reply is not JSON" in str(failure)
    assert isinstance(failure, GraphMemError)
    assert len(srv.requests) == 3
    assert len(srv.requests[2]["messages"]) == len(PROMPT) + 4  # two corrections so far
    (usage,) = llm.ledger.records()
    assert (usage.ok, usage.attempts, usage.prompt_tokens) == (False, 3, 3 * DEFAULT_PROMPT_TOKENS)


# --- transport errors ------------------------------------------------------------------------


def test_server_error_then_success_backs_off_once(srv: ScriptedOpenAIServer) -> None:
    srv.reply_status(500, "overloaded")
    srv.reply_json(GOOD)
    sleeps = Sleeps()
    llm = make_client(srv, sleep=sleeps)
    assert llm.complete_structured("extract_facts", PROMPT, Facts) == Facts.model_validate(GOOD)
    assert len(srv.requests) == 2 and len(sleeps) == 1
    assert srv.requests[1]["messages"] == PROMPT  # no correction for a transport error
    assert llm.ledger.records()[0].attempts == 2


def test_backoff_doubles_up_to_the_cap(srv: ScriptedOpenAIServer) -> None:
    for status in (500, 502, 503):
        srv.reply_status(status)
    srv.reply_json(GOOD)
    sleeps = Sleeps()
    llm = make_client(
        srv, sleep=sleeps, max_retries=3, backoff_base_s=0.01, backoff_max_s=0.025, backoff_jitter=0
    )
    llm.complete_structured("extract_facts", PROMPT, Facts)
    assert sleeps == pytest.approx([0.01, 0.02, 0.025])


def test_rate_limit_is_retried_honouring_retry_after(srv: ScriptedOpenAIServer) -> None:
    srv.reply_status(429, "slow down", headers={"Retry-After": "0.5"})
    srv.reply_json(GOOD)
    sleeps = Sleeps()
    make_client(srv, sleep=sleeps, backoff_max_s=2.0).complete_structured("x", PROMPT, Facts)
    assert sleeps == [0.5]
    assert len(srv.requests) == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
    ],
)
def test_client_errors_are_not_retried(
    srv: ScriptedOpenAIServer, status: int, error: type[Exception]
) -> None:
    srv.reply_status(status, "no such thing")
    srv.default(json=GOOD)
    llm = make_client(srv)
    with pytest.raises(LLMFailure, match=r"after 1 attempt: .*no such thing") as info:
        llm.complete_structured("extract_facts", PROMPT, Facts)
    assert info.value.attempts == 1
    assert isinstance(info.value.last_error, error)
    assert len(srv.requests) == 1
    assert llm.ledger.records()[0].ok is False


def test_timeout_is_retried(srv: ScriptedOpenAIServer) -> None:
    srv.reply_delay(3.0)
    srv.reply_json({"facts": []})
    srv.reply_json(GOOD)
    started = time.monotonic()
    facts = make_client(srv, timeout_s=0.3).complete_structured("extract_facts", PROMPT, Facts)
    assert time.monotonic() - started < 2.0
    assert facts == Facts.model_validate(GOOD)
    assert len(srv.requests) == 2


def test_connection_refused_fails_after_retries() -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = LLMSettings(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_base_s=0.001
    )
    with pytest.raises(LLMFailure) as info:
        LLMClient(settings).complete_structured("extract_facts", PROMPT, Facts)
    assert info.value.attempts == 2
    assert isinstance(info.value.last_error, openai.APIConnectionError)
    assert "Connection error" in str(info.value)


# --- usage accounting ------------------------------------------------------------------------


def test_usage_is_recorded_per_operation(srv: ScriptedOpenAIServer) -> None:
    seen: list[Usage] = []
    llm = LLMClient(make_client(srv).settings, sink=seen.append)
    srv.reply_json(GOOD, prompt_tokens=100, completion_tokens=20)
    srv.reply_json(GOOD, prompt_tokens=50, completion_tokens=10)
    srv.reply_json({"facts": []}, with_usage=False)
    llm.complete_structured("extract_facts", PROMPT, Facts)
    llm.complete_structured("extract_facts", PROMPT, Facts)
    llm.complete_structured("summarize", PROMPT, Facts)
    records = llm.ledger.records()
    assert seen == records
    assert [(r.operation, r.prompt_tokens, r.completion_tokens) for r in records] == [
        ("extract_facts", 100, 20),
        ("extract_facts", 50, 10),
        ("summarize", 0, 0),
    ]
    assert all(r.ok and r.attempts == 1 and r.model == "scripted-model" for r in records)
    assert all(r.latency_ms > 0 for r in records)
    totals = llm.ledger.totals()
    assert (totals["extract_facts"].calls, totals["extract_facts"].total_tokens) == (2, 180)
    assert (totals["summarize"].calls, totals["summarize"].failures) == (1, 0)


def test_usage_sums_tokens_over_attempts(srv: ScriptedOpenAIServer) -> None:
    srv.reply_text("oops", prompt_tokens=30, completion_tokens=2)
    srv.reply_json(GOOD)
    llm = make_client(srv)
    llm.complete_structured("extract_facts", PROMPT, Facts)
    (usage,) = llm.ledger.records()
    assert usage.attempts == 2
    assert usage.prompt_tokens == 30 + DEFAULT_PROMPT_TOKENS
    assert usage.completion_tokens == 2 + DEFAULT_COMPLETION_TOKENS


def test_ledger_is_thread_safe_and_a_failing_sink_is_contained(
    srv: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_sink(_: Usage) -> None:
        raise RuntimeError("database down")

    srv.default(json=GOOD)
    ledger = UsageLedger(sink=broken_sink, max_records=5)
    llm = LLMClient(make_client(srv).settings, ledger=ledger)
    threads = [
        threading.Thread(target=llm.complete_structured, args=(f"op{i % 2}", PROMPT, Facts))
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    totals = ledger.totals()
    assert totals["op0"].calls == totals["op1"].calls == 4
    assert len(ledger.records()) == 5  # bounded; totals still cover all calls
    assert caplog.text.count("usage sink failed") == 8


# --- settings and the LLM-optional principle -------------------------------------------------


@pytest.mark.parametrize(
    "values", [{}, {"model": "m"}, {"base_url": "http://127.0.0.1:1/v1"}, {"base_url": ""}]
)
def test_without_endpoint_llm_is_disabled(values: dict[str, str]) -> None:
    settings = LLMSettings.model_validate(values)
    assert settings.enabled is False
    with pytest.raises(LLMUnavailable, match="GRAPHMEM_LLM_BASE_URL"):
        LLMClient(settings)


def test_from_env_reads_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("GRAPHMEM_LLM_API_KEY", "k")
    monkeypatch.setenv("GRAPHMEM_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("GRAPHMEM_LLM_TIMEOUT_S", "12.5")
    monkeypatch.setenv("GRAPHMEM_LLM_MAX_RETRIES", "5")
    monkeypatch.setenv("GRAPHMEM_LLM_JSON_MODE", "json_schema")
    settings = LLMSettings.from_env()
    assert settings.enabled is True
    assert (settings.base_url, settings.model) == ("http://127.0.0.1:11434/v1", "qwen2.5:7b")
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "k"
    assert (settings.timeout_s, settings.max_retries) == (12.5, 5)
    assert settings.json_mode == "json_schema"


def test_from_env_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_LLM_BASE_URL", "")
    settings = LLMSettings.from_env()
    assert settings.enabled is False
    assert (settings.timeout_s, settings.max_retries) == (30.0, 3)
    assert settings.json_mode == "json_object"


def test_scripted_server_lists_models(srv: ScriptedOpenAIServer) -> None:
    client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
    assert [m.id for m in client.models.list()] == ["scripted-model"]
