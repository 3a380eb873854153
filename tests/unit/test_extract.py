"""Unit tests of fact extraction (graphmem.formation.extract): prompt, reply, checks, writes.

The LLM is `ScriptedOpenAIServer`, an in-process HTTP test double (tests/support) that the real
``openai`` client talks to over loopback. `RecordingFacts` is a stub that records the writes
`apply` hands to the Linker; the real `Facts` against Neo4j is tested in tests/integration.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import SecretStr

from graphmem.facts.models import FactWrite, ObservationIn, ProfileOp
from graphmem.formation.extract import Extraction, apply, extract, parse_when, to_writes
from graphmem.llm import LLMClient, LLMFailure, LLMSettings, MalformedReply
from graphmem.models import Message
from tests.support.scripted_openai import ScriptedOpenAIServer

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def msg(id_: str, speaker: str, text: str, at: datetime) -> Message:
    return Message(id=id_, owner="caroline", session_id="s1", speaker=speaker, text=text,
                   timestamp=at, recorded_at=at)


STRETCH = [
    msg("m1", "Caroline", "I moved to Boston yesterday!", T0),
    msg("m2", "Melanie", "Congrats! Still at Acme?", T0 + timedelta(minutes=1)),
    msg("m3", "Caroline", "No, I left Acme last week.\nNow I work at Globex.",
        datetime(2023, 5, 8, 16, 0, tzinfo=timezone(timedelta(hours=2)))),
]
PROFILE = {"city": "Denver", "employer": "Acme"}
FACT = {"subject": "Caroline", "type": "city", "content": "Caroline lives in Boston",
        "valid_from": "2023-05-07", "explicit": True, "confidence": 0.9, "sources": ["m1", "m9"]}
GOOD: dict[str, Any] = {
    "facts": [
        FACT,
        {"subject": "Caroline", "type": "Job Change", "content": "left Acme for Globex",
         "valid_from": None, "explicit": False, "confidence": 1.4, "sources": ["[m3]", "m3"]},
        {"subject": "Melanie", "type": "hobby", "content": "hiking", "explicit": True,
         "sources": ["m42"]},
        {"subject": "Caroline", "type": "pet", "content": "  ", "explicit": True,
         "sources": ["m1"]},
    ],
    "profile": [
        {"op": "UPDATE", "key": "city", "value": "Boston", "explicit": True, "sources": ["m1"]},
        {"op": "update", "key": "employer", "value": "Globex", "explicit": True,
         "sources": ["m3"]},
        {"op": "DELETE", "key": "pet", "value": "cat", "explicit": False, "sources": ["m2"]},
        {"op": "NOOP", "key": "name", "value": "Caroline", "explicit": True, "sources": []},
        {"op": "ADD", "key": "hobby", "value": "", "explicit": True, "sources": ["m1"]},
        {"op": "ADD", "key": "pet", "value": "dog", "explicit": True, "sources": ["x"]},
    ],
}



def client(srv: ScriptedOpenAIServer, max_retries: int = 2) -> LLMClient:
    settings = LLMSettings(base_url=srv.base_url, model="scripted-model", api_key=SecretStr("k"),
                           timeout_s=5.0, max_retries=max_retries)
    return LLMClient(settings, sleep=lambda _: None)


# --- the prompt ----------------------------------------------------------------------------------

def test_prompt_shows_ids_resolved_dates_profile_and_asks_for_json(
    srv: ScriptedOpenAIServer,
) -> None:
    srv.reply_json(GOOD)
    with client(srv) as llm:
        extract(llm, "caroline", STRETCH, PROFILE)
    (body,) = srv.requests
    system, user = (m["content"] for m in body["messages"])
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["response_format"] == {"type": "json_object"}
    assert "JSON" in system and "JSON" in user
    for rule in ("ADD", "UPDATE", "DELETE", "NOOP", "explicit", "sources", "snake_case"):
        assert rule in system
    assert "[m1] 2023-05-08 13:56 Caroline: I moved to Boston yesterday [2023-05-07]!" in user
    assert "[m2] 2023-05-08 13:57 Melanie: Congrats! Still at Acme?" in user
    # m3 was sent at 16:00+02:00: shown in UTC; continuation lines are indented
    assert "[m3] 2023-05-08 14:00 Caroline: No, I left Acme last week [2023-05-01..2023-05-07]." \
        in user
    assert "\n    Now I work at Globex." in user
    assert "city: Denver\nemployer: Acme" in user
    assert "Owner: caroline" in user


def test_empty_profile_and_empty_stretch(srv: ScriptedOpenAIServer) -> None:
    srv.reply_json({"facts": [], "profile": []})
    with client(srv) as llm:
        assert extract(llm, "caroline", [], PROFILE) == Extraction(facts=[], profile=[])
        assert srv.requests == []  # nothing to read: no call
        assert extract(llm, "caroline", STRETCH[:1], {}) == Extraction(facts=[], profile=[])
    assert "Current profile of caroline:\n(empty)" in srv.requests[0]["messages"][1]["content"]


# --- replies, retries, failures, usage -----------------------------------------------------------

def test_reply_is_parsed_and_usage_recorded(srv: ScriptedOpenAIServer) -> None:
    srv.reply_json(GOOD, prompt_tokens=120, completion_tokens=30)
    with client(srv) as llm:
        extraction = extract(llm, "caroline", STRETCH, PROFILE)
        (usage,) = llm.ledger.records()
    assert extraction == Extraction.model_validate(GOOD)
    assert extraction.profile[1].op == "UPDATE"
    assert (usage.operation, usage.prompt_tokens, usage.completion_tokens) == (
        "extract_facts", 120, 30)
    assert (usage.attempts, usage.ok) == (1, True)


def test_malformed_replies_are_retried_with_a_correction(srv: ScriptedOpenAIServer) -> None:
    srv.reply_text("Sure! Caroline moved to Boston.")
    srv.reply_json({"facts": [{"subject": "Caroline", "type": "city"}], "profile": []})
    srv.reply_json(GOOD)
    with client(srv) as llm:
        extraction = extract(llm, "caroline", STRETCH, PROFILE)
        totals = llm.ledger.totals()["extract_facts"]
    assert extraction == Extraction.model_validate(GOOD)
    assert len(srv.requests) == 3
    second, third = srv.requests[1]["messages"], srv.requests[2]["messages"]
    assert second[2] == {"role": "assistant", "content": "Sure! Caroline moved to Boston."}
    assert "not JSON" in second[3]["content"]
    assert "facts.0.content" in third[5]["content"] and "JSON schema" in third[5]["content"]
    assert (totals.calls, totals.failures, totals.attempts) == (1, 0, 3)
    assert totals.prompt_tokens == 3 * 11


def test_persistent_malformed_replies_fail(srv: ScriptedOpenAIServer) -> None:
    srv.default(json={"observations": []})
    with client(srv, max_retries=2) as llm, pytest.raises(LLMFailure) as failed:
        extract(llm, "caroline", STRETCH, PROFILE)
    assert (failed.value.operation, failed.value.attempts) == ("extract_facts", 3)
    assert isinstance(failed.value.last_error, MalformedReply)
    (usage,) = llm.ledger.records()
    assert (usage.operation, usage.attempts, usage.ok) == ("extract_facts", 3, False)


# --- checking what the model said -----------------------------------------------------------------

def test_to_writes_checks_sources_dates_and_ops() -> None:
    observations, ops, report = to_writes(Extraction.model_validate(GOOD), "caroline", STRETCH)
    assert observations == [
        ObservationIn(owner="caroline", subject="Caroline", type="city",
                      content="Caroline lives in Boston",
                      valid_from=datetime(2023, 5, 7, tzinfo=UTC), explicit=True,
                      confidence=0.9, sources=["m1"]),
        ObservationIn(owner="caroline", subject="Caroline", type="job_change",
                      content="left Acme for Globex", valid_from=None, explicit=False,
                      confidence=1.0, sources=["m3"]),
    ]
    assert [(o.op, o.key, o.value, o.explicit, o.sources) for o in ops] == [
        ("UPDATE", "city", "Boston", True, ["m1"]),
        ("UPDATE", "employer", "Globex", True, ["m3"]),
        ("DELETE", "pet", None, False, ["m2"]),
    ]
    assert (report.facts_proposed, report.observations) == (4, 2)
    assert (report.profile_proposed, report.profile_ops, report.noops) == (6, 3, 1)
    assert report.dropped == {"no_source": 2, "empty": 1, "invalid": 1}
    assert (report.unknown_sources, report.clamped, report.bad_dates) == (3, 1, 0)


def test_unreadable_date_is_dropped_not_the_fact() -> None:
    reply = {"facts": [{**FACT, "valid_from": "the other day"}], "profile": []}
    (observation,), _, report = to_writes(Extraction.model_validate(reply), "caroline", STRETCH)
    assert observation.valid_from is None and report.bad_dates == 1


@pytest.mark.parametrize(("text", "expected"), [
    ("2023-05-07", datetime(2023, 5, 7, tzinfo=UTC)),
    ("2023-05-07T13:56:00+02:00", datetime(2023, 5, 7, 11, 56, tzinfo=UTC)),
    ("2023-05-07 13:56", datetime(2023, 5, 7, 13, 56, tzinfo=UTC)),
    ("2023-05-07T13:56Z", datetime(2023, 5, 7, 13, 56, tzinfo=UTC)),
    ("2023-05", datetime(2023, 5, 1, tzinfo=UTC)),
    ("~2022", datetime(2022, 1, 1, tzinfo=UTC)),
    ("2023-05-01..2023-05-07", datetime(2023, 5, 1, tzinfo=UTC)),
    (None, None), ("", None), ("null", None),
])
def test_parse_when(text: str | None, expected: datetime | None) -> None:
    assert parse_when(text) == expected


def test_parse_when_refuses_words() -> None:
    with pytest.raises(ValueError):
        parse_when("last week")


# --- writing through the Linker ----------------------------------------------------------------

class RecordingFacts:
    """Stub of `Facts`: records the writes it is handed, answers one FactWrite each."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[Any]]] = []

    def observe(self, tenant: str, observations: Sequence[ObservationIn]) -> list[FactWrite]:
        self.calls.append(("observe", tenant, list(observations)))
        return [FactWrite(id=f"o{i}", action="created") for i, _ in enumerate(observations)]

    def profile_ops(self, tenant: str, ops: Sequence[ProfileOp]) -> list[FactWrite]:
        self.calls.append(("profile_ops", tenant, list(ops)))
        return [FactWrite(id=f"p{i}", action="created") for i, _ in enumerate(ops)]


def test_apply_hands_the_checked_writes_to_the_linker() -> None:
    facts, extraction = RecordingFacts(), Extraction.model_validate(GOOD)
    report = apply(facts, "t1", "caroline", STRETCH, extraction)
    observations, ops, _ = to_writes(extraction, "caroline", STRETCH)
    assert facts.calls == [("observe", "t1", observations), ("profile_ops", "t1", ops)]
    assert [w.id for w in report.fact_writes] == ["o0", "o1"]
    assert [w.id for w in report.profile_writes] == ["p0", "p1", "p2"]


def test_apply_skips_empty_writes() -> None:
    facts = RecordingFacts()
    only_fact = Extraction.model_validate({"facts": [FACT], "profile": []})
    apply(facts, "t1", "caroline", STRETCH, only_fact)
    apply(facts, "t1", "caroline", STRETCH, Extraction(facts=[], profile=[]))
    assert [c[0] for c in facts.calls] == ["observe"]
