"""Unit tests of fact extraction (graphmem.formation.extract): prompt, reply, checks, writes.

The LLM is `ScriptedOpenAIServer`, an in-process HTTP test double (tests/support) that the real
``openai`` client talks to over loopback. `RecordingFacts` is a stub that records the writes
`apply` hands to the Linker; the real `Facts` against Neo4j is tested in tests/integration.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, cast

import pytest
from pydantic import SecretStr

from graphmem.facts.models import FactWrite, ObservationIn, ProfileOp
from graphmem.formation.extract import (
    Extraction,
    apply,
    extract,
    parse_when,
    support,
    to_writes,
)
from graphmem.llm import JsonMode, LLMClient, LLMFailure, LLMSettings, MalformedReply
from graphmem.models import Message
from graphmem.store import TenantStores
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



def client(srv: ScriptedOpenAIServer, max_retries: int = 2,
           json_mode: JsonMode = "json_object") -> LLMClient:
    settings = LLMSettings(base_url=srv.base_url, model="scripted-model", api_key=SecretStr("k"),
                           timeout_s=5.0, max_retries=max_retries, json_mode=json_mode)
    return LLMClient(settings, sleep=lambda _: None)


def as_returned(reply: dict[str, Any]) -> Extraction:
    """What `extract` returns for ``reply``: cited ids bare (``[m3]`` is ``m3``)."""
    found = Extraction.model_validate(reply)
    for item in [*found.facts, *found.profile]:
        item.sources = [s.strip("[] ") for s in item.sources]  # type: ignore[attr-defined]
    return found


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
    assert "cite only m1 .. m3" in user
    # a worked example with ids like the real ones, no placeholder to copy
    assert '"sources": ["m1"]' in system and "<message id>" not in system


def test_the_model_cites_short_ids_mapped_back_to_real_ones(srv: ScriptedOpenAIServer) -> None:
    """Real ids are long; the model sees m1 .. mN, and in json_schema mode the schema allows
    only those; the reply's m2 comes back as the second message's real id."""
    stretch = [msg(f"conv-26:D1:{n}", "Caroline", text, T0 + timedelta(minutes=n))
               for n, text in enumerate(["Hi Mel!", "I moved to Boston yesterday!"], 1)]
    srv.reply_json({"facts": [FACT | {"sources": ["m2", "[m1]", "m7", "conv-26:D1:2"]}],
                    "profile": []})
    with client(srv, json_mode="json_schema") as llm:
        found = extract(llm, "caroline", stretch, {})
    (body,) = srv.requests
    user = body["messages"][1]["content"]
    assert "[m1] 2023-05-08 13:57 Caroline: Hi Mel!" in user and "conv-26" not in user
    schema = body["response_format"]["json_schema"]["schema"]
    for item in ("ExtractedFact", "ExtractedProfileOp"):
        assert schema["$defs"][item]["properties"]["sources"]["items"]["enum"] == ["m1", "m2"]
    assert found.facts[0].sources == ["conv-26:D1:2", "conv-26:D1:1", "m7", "conv-26:D1:2"]
    (observation,), _, report = to_writes(found, "caroline", stretch)
    assert observation.sources == ["conv-26:D1:2", "conv-26:D1:1"]
    assert report.unknown_sources == 1


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
    assert extraction == as_returned(GOOD)
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
    assert extraction == as_returned(GOOD)
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


def test_summary_counts_every_drop_and_flags_all_dropped() -> None:
    """A model that copies a placeholder as every source keeps nothing: status all_dropped."""
    copied = {"facts": [FACT | {"sources": ["<message id>"]}] * 3,
              "profile": [{"op": "ADD", "key": "city", "value": "Boston", "explicit": True,
                           "sources": ["<message id>"]}]}
    _, _, report = to_writes(Extraction.model_validate(copied), "caroline", STRETCH)
    assert report.summary() == {
        "status": "all_dropped", "proposed": 4, "kept": 0, "noops": 0,
        "dropped": {"no_source": 4, "ungrounded": 0, "empty": 0, "invalid": 0},
        "unknown_sources": 4, "bad_dates": 0, "clamped": 0}
    _, _, report = to_writes(Extraction.model_validate(GOOD), "caroline", STRETCH)
    assert (report.status, report.proposed, report.kept) == ("partial", 10, 5)
    _, _, report = to_writes(Extraction(facts=[], profile=[]), "caroline", STRETCH)
    assert report.summary()["status"] == "empty"
    _, _, report = to_writes(Extraction.model_validate({"facts": [FACT], "profile": []}),
                             "caroline", STRETCH)
    assert report.summary()["status"] == "ok"


def words(texts: Sequence[str]) -> list[list[float]]:
    """A toy embedding: one dimension per word of a small vocabulary (case and punctuation
    ignored), so similarity is word overlap."""
    vocab = ["boston", "moved", "lives", "caroline", "acme", "globex", "work", "left", "paris",
             "ski", "city", "employer"]
    cleaned = [" ".join("".join(c if c.isalnum() else " " for c in t.lower()).split())
               for t in texts]
    return [[float(w in t.split()) for w in vocab] + [0.01] for t in cleaned]


def test_grounding_drops_claims_their_sources_do_not_support() -> None:
    """m1 says Caroline moved to Boston: "lives in Boston" is grounded in it, "skis in Paris"
    is not (ungrounded, though its source exists); DELETE claims no value and is kept."""
    reply = {"facts": [FACT | {"sources": ["m1"]},
                       FACT | {"content": "skis in Paris", "type": "hobby", "sources": ["m1"]}],
             "profile": [{"op": "UPDATE", "key": "city", "value": "Boston", "explicit": True,
                          "sources": ["m1"]},
                         {"op": "ADD", "key": "ski", "value": "Paris", "explicit": True,
                          "sources": ["m1"]},
                         {"op": "DELETE", "key": "employer", "explicit": True,
                          "sources": ["m3"]}]}
    observations, ops, report = to_writes(Extraction.model_validate(reply), "caroline",
                                          STRETCH, embed=words)
    assert [o.content for o in observations] == ["Caroline lives in Boston"]
    assert [(o.op, o.key) for o in ops] == [("UPDATE", "city"), ("DELETE", "employer")]
    assert report.summary()["dropped"]["ungrounded"] == 2
    assert report.status == "partial"
    unchecked, _, _ = to_writes(Extraction.model_validate(reply), "caroline", STRETCH)
    assert len(unchecked) == 2  # no embed: no grounding check


def test_support_is_the_best_cited_message() -> None:
    scores = support(["Caroline lives in Boston", "Caroline works at Globex"],
                     [["m2", "m1"], ["m2"]], STRETCH, words)
    assert scores[0] > 0.4 > 0.01 > scores[1]


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

T1 = cast(TenantStores, "t1's stores")
"""Stands for one tenant's stores: the stub only hands it back."""


class RecordingFacts:
    """Stub of `Facts`: records the writes it is handed, answers one FactWrite each."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, TenantStores, list[Any]]] = []

    def observe(self, stores: TenantStores, observations: Sequence[ObservationIn],
                visible: frozenset[str] | None = None,
                by: str | None = None) -> list[FactWrite]:
        assert by == "extraction"
        self.calls.append(("observe", stores, list(observations)))
        return [FactWrite(id=f"o{i}", action="created") for i, _ in enumerate(observations)]

    def profile_ops(self, stores: TenantStores, ops: Sequence[ProfileOp],
                    visible: frozenset[str] | None = None,
                    by: str | None = None) -> list[FactWrite]:
        assert by == "extraction"
        self.calls.append(("profile_ops", stores, list(ops)))
        return [FactWrite(id=f"p{i}", action="created") for i, _ in enumerate(ops)]


def test_apply_hands_the_checked_writes_to_the_linker() -> None:
    facts, extraction = RecordingFacts(), Extraction.model_validate(GOOD)
    report = apply(facts, T1, "caroline", STRETCH, extraction)
    observations, ops, _ = to_writes(extraction, "caroline", STRETCH)
    assert facts.calls == [("observe", T1, observations), ("profile_ops", T1, ops)]
    assert [w.id for w in report.fact_writes] == ["o0", "o1"]
    assert [w.id for w in report.profile_writes] == ["p0", "p1", "p2"]


def test_apply_skips_empty_writes() -> None:
    facts = RecordingFacts()
    only_fact = Extraction.model_validate({"facts": [FACT], "profile": []})
    apply(facts, T1, "caroline", STRETCH, only_fact)
    apply(facts, T1, "caroline", STRETCH, Extraction(facts=[], profile=[]))
    assert [c[0] for c in facts.calls] == ["observe"]
