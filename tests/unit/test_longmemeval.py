"""LongMemEval files in both layouts become messages and gold evidence: official (answer sessions,
has_answer turns, question date, `_abs` abstention) and repackaged (sessions rebuilt from the
turns' dates, every session gold in an oracle history); and the benchmark's scoring of a returned
message list. Small files written here, no services."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphmem.bench.longmemeval import POOLED_OWNER, available, plan, scores
from graphmem.datasets import longmemeval
from graphmem.datasets.longmemeval import parse_date, session_of

OFFICIAL = [
    {"question_id": "q1", "question_type": "single-session-user",
     "question": "What discount did I get?", "answer": "10%",
     "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["sharegpt_a", "answer_b 1"],
     "haystack_dates": ["2023/05/20 (Sat) 07:34", "2023/05/26 (Fri) 01:08"],
     "haystack_sessions": [
         [{"role": "user", "content": "Tell me about Rome."},
          {"role": "assistant", "content": "Rome is old."}],
         [{"role": "user", "content": "I got 10% off my first order!", "has_answer": True},
          {"role": "assistant", "content": "Nice."},
          {"role": "user", "content": "   "}]],
     "answer_session_ids": ["answer_b 1"]},
    {"question_id": "q2_abs", "question_type": "single-session-user",
     "question": "What is my hamster's name?", "answer": "You did not mention this.",
     "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["s9"], "haystack_dates": ["2023/05/20 (Sat) 07:34"],
     "haystack_sessions": [[{"role": "user", "content": "My cat is Luna.", "has_answer": True}]],
     "answer_session_ids": ["s9"]},
]


def _repackaged(file: str, items: list[dict[str, object]]) -> dict[str, object]:
    return {"source": "x", "file": file, "n_questions": len(items), "data": items}


TURNS = [
    {"role": "user", "content": "I wake up at 6:45.", "date": "2023/05/30 (Tue) 21:48"},
    {"role": "assistant", "content": "Early!", "date": "2023/05/30 (Tue) 21:48"},
    {"role": "user", "content": "On Tuesdays too.", "date": "2023/04/01 (Sat) 08:00"},
    {"role": "user", "content": "And Thursdays.", "date": "2023/05/30 (Tue) 21:48"},
]


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_official_layout_gives_answer_sessions_and_turns(tmp_path: Path) -> None:
    first, abstain = longmemeval.load(_write(tmp_path, OFFICIAL))
    assert (first.id, first.history, first.layout, first.gold) == (
        "q1", "q1", "official", "has_answer")
    assert first.question_date == datetime(2023, 6, 1, 10, 0, tzinfo=UTC)
    assert [s.id for s in first.sessions] == ["sharegpt_a", "answer_b_1"]
    assert first.gold_sessions == ("answer_b_1",)
    assert first.gold_turns == ("q1/answer_b_1/0",)
    msgs = first.messages("alice")
    assert [m.id for m in msgs] == ["q1/sharegpt_a/0", "q1/sharegpt_a/1", "q1/answer_b_1/0",
                                    "q1/answer_b_1/1"]  # the blank turn is left out
    assert {m.owner for m in msgs} == {"alice"}
    assert msgs[2].session_id == "q1/answer_b_1" and msgs[2].speaker == msgs[2].role == "user"
    assert msgs[3].timestamp - msgs[2].timestamp == timedelta(seconds=30)
    assert msgs[2].timestamp == datetime(2023, 5, 26, 1, 8, tzinfo=UTC)
    assert abstain.abstention and abstain.gold == "none" and abstain.gold_sessions == ()


def test_repackaged_oracle_rebuilds_sessions_and_all_are_gold(tmp_path: Path) -> None:
    items = [{"id": "temporal-rea-gpt4_x", "question_type": "temporal-reasoning",
              "questions": [{"id": "q1", "question": "When do I wake up?", "answer": "6:45"}],
              "conversation": TURNS}]
    (item,) = longmemeval.load(_write(tmp_path, _repackaged("longmemeval_oracle.json", items)))
    assert (item.id, item.history, item.layout) == (
        "temporal-rea-gpt4_x-q1", "temporal-rea-gpt4_x", "repackaged")
    # runs of one date are sessions; the date coming back later is another session
    assert [(s.id, len(s.turns)) for s in item.sessions] == [("s1", 2), ("s2", 1), ("s3", 1)]
    assert item.sessions[1].date == datetime(2023, 4, 1, 8, 0, tzinfo=UTC)
    assert item.gold == "oracle_history" and item.gold_sessions == ("s1", "s2", "s3")
    assert item.gold_turns == () and item.question_date is None
    assert item.messages("o")[3].id == "temporal-rea-gpt4_x/s3/0"


def test_repackaged_abstention_and_unknown_gold(tmp_path: Path) -> None:
    items = [{"id": "abstain-0862e8bf_abs", "question_type": "abstention",
              "questions": [{"id": "abs1", "question": "My hamster's name?", "answer": "-",
                             "is_abstention": True}], "conversation": TURNS},
             {"id": "other", "question_type": "multi-session",
              "questions": [{"id": "q2", "question": "?", "answer": 3}], "conversation": TURNS}]
    abstain, other = longmemeval.load(
        _write(tmp_path, _repackaged("longmemeval_s_cleaned.json", items)))
    assert abstain.abstention and abstain.gold == "none"
    assert not other.abstention and other.gold == "unknown" and other.answer == "3"


def test_dates_and_session_of() -> None:
    assert parse_date("2023/05/30 (Tue) 21:48") == datetime(2023, 5, 30, 21, 48, tzinfo=UTC)
    assert parse_date("2023/05/30") == datetime(2023, 5, 30, tzinfo=UTC)
    with pytest.raises(ValueError, match="not a LongMemEval date"):
        parse_date("May 30, 2023")
    assert session_of("hist-1/s3/12") == "s3"


def test_plan_pools_repackaged_histories_and_scores_sessions(tmp_path: Path) -> None:
    items = [{"id": f"h{n}", "question_type": "t", "conversation": TURNS,
              "questions": [{"id": "q", "question": "?", "answer": "a"}]} for n in (1, 2)]
    repack = longmemeval.load(_write(tmp_path, _repackaged("longmemeval_oracle.json", items)))
    official = longmemeval.load(_write(tmp_path, OFFICIAL))
    owners, probes = plan([*repack, *official])
    assert {o: len(m) for o, m in owners.items()} == {POOLED_OWNER: 8, "q1": 4, "q2_abs": 1}
    assert [p.owner for p in probes] == [POOLED_OWNER, POOLED_OWNER, "q1", "q2_abs"]
    h1 = repack[0]
    # h2's s1 is not h1's s1; h1's s1 and s3 of three gold sessions were hit
    got = scores(h1, ["h1/s1/0", "h1/s1/1", "h2/s2/0", "h1/s3/0"])
    assert got == {"session_recall": pytest.approx(2 / 3), "session_any": 1.0,
                   "session_all": 0.0, "turn_recall": None}
    assert scores(official[0], ["q1/answer_b_1/0"]) == {
        "session_recall": 1.0, "session_any": 1.0, "session_all": 1.0, "turn_recall": 1.0}
    assert scores(official[1], ["q2_abs/s9/0"])["session_recall"] is None


def test_methods_not_installed_are_left_out() -> None:
    assert available(["rrf_expand", "no_such_method"]) == ["rrf_expand"]
