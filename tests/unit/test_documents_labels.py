"""LLM topic labels (`graphmem.documents.labels`) against a scripted OpenAI-compatible server
(a real HTTP server the real client talks to) and an in-memory stand-in for the store: the
prompt shows a topic's keyphrases, titles and opening text; a reply is validated (an empty label
or summary is not written); a failed call writes nothing for its topic and the job fails naming
how many were left, after writing the others; the model is recorded."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from graphmem.documents import labels
from graphmem.llm.client import LLMClient, LLMSettings
from graphmem.store.connection import Row
from tests.support.scripted_openai import ScriptedOpenAIServer


class FakeStore:
    """The two calls `label_topics` makes of a `DocumentStore`, in memory."""

    tenant = "t"

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.written: dict[str, tuple[str, str, str]] = {}

    def topics_to_label(self, owner: str, limit: int, documents: int,
                        chunks: int) -> list[Row]:
        return [r for r in self.rows if r["id"] not in self.written][:limit]

    def set_topic_label(self, owner: str, id_: str, label: str, summary: str, model: str,
                        now: datetime) -> bool:
        self.written[id_] = (label, summary, model)
        return True


def _rows() -> list[Row]:
    return [{"id": "tp-1", "level": 1, "keyphrases": "glacier, ice, melt",
             "titles": ["Glacier retreat", "Meltwater"],
             "excerpts": ["Glaciers retreat as summers warm.", "Meltwater feeds the river."]},
            {"id": "tp-2", "level": 1, "keyphrases": "rocket, orbit",
             "titles": ["Launch"], "excerpts": ["The rocket reached orbit."]}]


def _client(srv: ScriptedOpenAIServer) -> LLMClient:
    return LLMClient(LLMSettings(base_url=srv.base_url, model="scripted-model", max_retries=1,
                                 backoff_base_s=0.0))


def test_the_prompt_shows_keyphrases_titles_and_opening_text() -> None:
    msgs = labels.label_messages("glacier, ice", ["Glacier retreat", ""], ["Glaciers " * 300,
                                                                         "Untitled text."])
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert "JSON" in system and '"label"' in system and '"summary"' in system
    assert "Keyphrases: glacier, ice" in user and "Documents (2): Glacier retreat" in user
    assert "[1] Glacier retreat: Glaciers" in user and "[2] Untitled text." in user
    assert len(user) < 2 * labels.EXCERPT_CHARS + 200  # each excerpt bounded


def test_each_topic_gets_the_llms_label_and_summary_with_its_model() -> None:
    store = FakeStore(_rows())
    with ScriptedOpenAIServer() as srv:
        srv.reply_json({"label": "Melting glaciers", "summary": "How glaciers  retreat."})
        srv.reply_json({"label": "Rocket launches", "summary": "Rockets reaching orbit."})
        out = labels.label_topics(_client(srv), store, "o",  # type: ignore[arg-type]
                                  datetime(2026, 1, 1, tzinfo=UTC))
        assert "glacier, ice, melt" in srv.requests[0]["messages"][1]["content"]
    assert out == {"owner": "o", "labelled": 2, "model": "scripted-model"}
    assert store.written == {
        "tp-1": ("Melting glaciers", "How glaciers retreat.", "scripted-model"),
        "tp-2": ("Rocket launches", "Rockets reaching orbit.", "scripted-model")}


@pytest.mark.parametrize("bad", [{"label": "", "summary": "x"}, {"label": "x", "summary": " "},
                                 {"label": "x"}, "not json"])
def test_a_reply_without_a_label_or_summary_writes_nothing(bad: Any) -> None:
    store = FakeStore(_rows()[:1])
    with ScriptedOpenAIServer() as srv:
        if isinstance(bad, str):
            srv.default(text=bad)
        else:
            srv.default(json=bad)
        with pytest.raises(labels.LabelsFailed, match="1 of 1 topics of 'o' not labelled"):
            labels.label_topics(_client(srv), store, "o")  # type: ignore[arg-type]
        assert len(srv.requests) == 2  # the client's own retry with a correction
    assert store.written == {}


def test_a_failure_leaves_the_others_written_and_a_retry_does_the_rest() -> None:
    store = FakeStore(_rows())
    with ScriptedOpenAIServer() as srv:
        srv.reply_status(400, "bad request")  # not retryable: tp-1 fails at once
        srv.reply_json({"label": "Rocket launches", "summary": "Rockets reaching orbit."})
        left = r"1 of 2 topics of 'o' not labelled \(1 written\); first: tp-1"
        with pytest.raises(labels.LabelsFailed, match=left):
            labels.label_topics(_client(srv), store, "o")  # type: ignore[arg-type]
        assert list(store.written) == ["tp-2"]
        srv.default(json={"label": "Melting glaciers", "summary": "How glaciers retreat."})
        assert labels.label_topics(_client(srv), store, "o")["labelled"] == 1  # type: ignore[arg-type]
    assert sorted(store.written) == ["tp-1", "tp-2"]
