"""Unit tests of the LLM path of episode formation: LLMFinder and LLMNarrator talking to
`ScriptedOpenAIServer` (tests/support: an in-process OpenAI-compatible TEST DOUBLE, no model)
through the real `LLMClient`; and which path `Former.for_settings` picks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem.config import Settings
from graphmem.formation.episodes import ExtractiveNarrator, draft
from graphmem.formation.llm_episodes import LLMFinder, LLMNarrator
from graphmem.formation.observer import HeuristicFinder, Turn, segment
from graphmem.formation.prompts_episodes import BOUNDARY_SYSTEM, NARRATIVE_SYSTEM
from graphmem.formation.run import Former
from graphmem.llm.client import LLMClient, LLMFailure, LLMSettings
from tests.support.scripted_openai import ScriptedOpenAIServer

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)




@pytest.fixture
def client(srv: ScriptedOpenAIServer) -> Iterator[LLMClient]:
    settings = LLMSettings(base_url=srv.base_url, model="test-model", max_retries=1,
                           backoff_base_s=0.01, timeout_s=5.0)
    with LLMClient(settings) as c:
        yield c


def turns(n: int) -> list[Turn]:
    return [Turn(f"m{i}", "alice" if i % 2 == 0 else "bob", f"turn {i}",
                 MONDAY + timedelta(minutes=i)) for i in range(n)]


def user_lines(body: dict[str, Any]) -> list[str]:
    system, user = body["messages"][:2]
    assert system["role"] == "system" and user["role"] == "user"
    return str(user["content"]).split("\n")


# --- LLMFinder ----------------------------------------------------------------------------------

def test_finder_sends_the_window_with_the_context_marked(
        srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    window = turns(8)
    window[3] = Turn("m3", "bob", "I went hiking yesterday.", window[3].timestamp)
    srv.reply_json({"boundaries": [4]})
    assert LLMFinder(client).find(window, 2) == [4]
    [body] = srv.requests
    assert body["model"] == "test-model"
    assert body["messages"][0]["content"] == BOUNDARY_SYSTEM
    assert "JSON" in BOUNDARY_SYSTEM  # json_object mode needs the word in the prompt
    lines = user_lines(body)
    assert lines[:3] == ["0. [2023-05-08 13:56] alice: turn 0",
                         "1. [2023-05-08 13:57] bob: turn 1", "--- new ---"]
    assert lines[3] == "2. [2023-05-08 13:58] alice: turn 2"
    assert lines[4] == "3. [2023-05-08 13:59] bob: I went hiking yesterday [2023-05-07]."
    assert len(lines) == 9 and lines.count("--- new ---") == 1


def test_finder_without_context_sends_no_marker(
        srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_json({"boundaries": []})
    assert LLMFinder(client).find(turns(5), 0) == []
    lines = user_lines(srv.requests[0])
    assert "--- new ---" not in lines
    assert [line.split(".")[0] for line in lines] == ["0", "1", "2", "3", "4"]


@pytest.mark.parametrize(("first_new", "answer", "expected"), [
    (2, [0, 1, 2, 5, 5, 7, 8, 99, -1], [2, 5, 7]),  # context, out of range, duplicates dropped
    (0, [0, 3, 1], [1, 3]),  # 0 is never a boundary: the window's first turn starts anyway
    (2, [], []),
])
def test_finder_drops_context_and_out_of_range_positions(
        srv: ScriptedOpenAIServer, client: LLMClient, first_new: int, answer: list[int],
        expected: list[int]) -> None:
    srv.reply_json({"boundaries": answer})
    assert LLMFinder(client).find(turns(8), first_new) == expected


def test_json_schema_mode_allows_only_the_new_positions(srv: ScriptedOpenAIServer) -> None:
    settings = LLMSettings(base_url=srv.base_url, model="test-model", max_retries=0,
                           timeout_s=5.0, json_mode="json_schema")
    srv.reply_json({"boundaries": [4]})
    srv.reply_json({"boundaries": []})
    with LLMClient(settings) as c:
        assert LLMFinder(c).find(turns(8), 3) == [4]
        assert LLMFinder(c).find(turns(1), 0) == []
    schemas = [r["response_format"]["json_schema"]["schema"] for r in srv.requests]
    assert schemas[0]["properties"]["boundaries"]["items"]["enum"] == [3, 4, 5, 6, 7]
    assert schemas[1]["properties"]["boundaries"]["maxItems"] == 0  # nothing to choose from
    assert "Example" in BOUNDARY_SYSTEM and "Example" in NARRATIVE_SYSTEM


def test_finder_reads_numbers_given_as_strings(
        srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_text('```json\n{"boundaries": ["3"]}\n```')
    assert LLMFinder(client).find(turns(8), 0) == [3]


def test_malformed_boundaries_are_retried_then_parsed(
        srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_text("The new episode starts at message 3.")
    srv.reply_json({"boundaries": [3]})
    assert LLMFinder(client).find(turns(8), 0) == [3]
    assert len(srv.requests) == 2
    retry = srv.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "The new episode starts at message 3."}
    assert retry[-1]["role"] == "user" and "JSON" in retry[-1]["content"]
    [usage] = client.ledger.records()
    assert (usage.operation, usage.attempts, usage.ok) == ("episode_boundaries", 2, True)


def test_finder_fails_after_the_retries(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.default(json={"boundaries": "no idea"})
    with pytest.raises(LLMFailure) as err:
        LLMFinder(client).find(turns(8), 0)
    assert (err.value.operation, err.value.attempts) == ("episode_boundaries", 2)
    assert client.ledger.totals()["episode_boundaries"].failures == 1


def test_segment_with_the_llm_finder(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    ts = turns(14)
    srv.reply_json({"boundaries": [5]})  # window 0..7
    srv.reply_json({"boundaries": [1, 5]})  # window 6..13, context 6, 7: 1 is ignored
    episodes = segment(ts, LLMFinder(client))
    assert [e[0].id for e in episodes] == ["m0", "m5", "m11"]
    assert [t for e in episodes for t in e] == ts
    assert user_lines(srv.requests[1])[0].startswith("0. [2023-05-08 14:02] alice: turn 6")
    assert client.ledger.totals()["episode_boundaries"].calls == 2


def test_boundary_usage_is_recorded(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_json({"boundaries": []}, prompt_tokens=100, completion_tokens=5)
    LLMFinder(client).find(turns(3), 0)
    totals = client.ledger.totals()["episode_boundaries"]
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens) == (1, 100, 5)
    assert client.ledger.records()[0].model == "test-model"


# --- LLMNarrator --------------------------------------------------------------------------------

def test_narrator_returns_title_and_narrative(
        srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    episode = [Turn("m0", "caroline", "I went to a support group yesterday.", MONDAY),
               Turn("m1", "melanie", "How was it?", MONDAY + timedelta(minutes=1))]
    srv.reply_json({"title": "  Caroline's support group  ",
                    "narrative": " Caroline went to a support group on 2023-05-07.\n"})
    narrator = LLMNarrator(client)
    assert narrator.name == "llm:test-model"
    assert narrator.narrate(episode) == ("Caroline's support group",
                                         "Caroline went to a support group on 2023-05-07.")
    [body] = srv.requests
    assert body["messages"][0]["content"] == NARRATIVE_SYSTEM
    assert user_lines(body) == [
        "0. [2023-05-08 13:56] caroline: I went to a support group yesterday [2023-05-07].",
        "1. [2023-05-08 13:57] melanie: How was it?"]
    [usage] = client.ledger.records()
    assert (usage.operation, usage.ok, usage.attempts) == ("episode_narrative", True, 1)


def test_narrator_retries_an_empty_title(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_json({"title": "", "narrative": "Something happened."})
    srv.reply_json({"title": "Something", "narrative": "Something happened."})
    assert LLMNarrator(client).narrate(turns(2)) == ("Something", "Something happened.")
    assert client.ledger.totals()["episode_narrative"].attempts == 2


def test_draft_with_the_llm_narrator(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_json({"title": "T", "narrative": "N"})
    d = draft(turns(3), LLMNarrator(client))
    assert (d.title, d.narrative, d.formed_by) == ("T", "N", "llm:test-model")
    assert d.turn_ids == ["m0", "m1", "m2"]


def test_usage_is_recorded_per_operation(srv: ScriptedOpenAIServer, client: LLMClient) -> None:
    srv.reply_json({"boundaries": [2]})
    srv.reply_json({"title": "A", "narrative": "B"})
    srv.reply_json({"title": "C", "narrative": "D"})
    episodes = segment(turns(4), LLMFinder(client))
    narrator = LLMNarrator(client)
    assert [narrator.narrate(e) for e in episodes] == [("A", "B"), ("C", "D")]
    totals = client.ledger.totals()
    assert set(totals) == {"episode_boundaries", "episode_narrative"}
    assert (totals["episode_boundaries"].calls, totals["episode_narrative"].calls) == (1, 2)
    assert [u.operation for u in client.ledger.records()] == [
        "episode_boundaries", "episode_narrative", "episode_narrative"]


# --- Former.for_settings ------------------------------------------------------------------------

def test_former_without_an_llm_takes_the_heuristic_path() -> None:
    former = Former.for_settings(Settings(), store=None, embedder=None,  # type: ignore[arg-type]
                                 facts=None)  # type: ignore[arg-type]
    assert isinstance(former.finder, HeuristicFinder)
    assert isinstance(former.narrator, ExtractiveNarrator)


def test_former_with_an_llm_takes_the_llm_path(srv: ScriptedOpenAIServer) -> None:
    settings = Settings(llm_base_url=srv.base_url, llm_model="test-model")
    former = Former.for_settings(settings, store=None, embedder=None,  # type: ignore[arg-type]
                                 facts=None)  # type: ignore[arg-type]
    assert isinstance(former.finder, LLMFinder)
    assert isinstance(former.narrator, LLMNarrator)
    assert former.narrator.name == "llm:test-model"
