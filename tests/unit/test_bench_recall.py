"""The LoCoMo evidence-recall scorer on hand-made cases: what every recall figure of the
benchmarks rests on (`graphmem.bench.units.evidence_recall`, with the gold cleaned by
`graphmem.bench.locomo.gold_evidence`, and the questions chosen by `probes_of`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem.bench.locomo import gold_evidence, probes_of
from graphmem.bench.units import evidence_recall
from graphmem.datasets.locomo import Conversation, Question
from graphmem.models import MessageIn

VALID = {"D1:1", "D1:2", "D1:3", "D2:1", "D2:2"}


def test_all_evidence_returned_is_one() -> None:
    assert evidence_recall(("D1:1", "D2:2"), ["conv-1/D1:1", "conv-1/D2:2"]) == 1.0


def test_partial_evidence_is_the_share_found() -> None:
    assert evidence_recall(("D1:1", "D1:2", "D2:1"), ["conv-1/D1:2"]) == pytest.approx(1 / 3)
    assert evidence_recall(("D1:1", "D1:2"), ["conv-1/D1:3", "conv-1/D1:1"]) == 0.5


def test_an_empty_result_scores_zero() -> None:
    assert evidence_recall(("D1:1",), []) == 0.0


def test_returned_messages_beyond_the_evidence_do_not_count() -> None:
    assert evidence_recall(("D1:1",), ["c/D1:1", "c/D1:2", "c/D1:3", "c/D2:1"]) == 1.0


def test_a_message_returned_twice_counts_once() -> None:
    assert evidence_recall(("D1:1", "D1:2"), ["c/D1:1", "c/D1:1", "c/D1:1"]) == 0.5


def test_a_gold_id_listed_twice_counts_once() -> None:
    # one of two distinct evidence turns found: 1/2, not the 2/3 a repeated gold id would give
    assert evidence_recall(("D1:1", "D1:1", "D1:2"), ["c/D1:1"]) == 0.5
    assert evidence_recall(("D1:2", "D1:1", "D1:1"), ["c/D1:2"]) == 0.5


def test_ids_are_compared_by_their_dia_id_whatever_the_prefix() -> None:
    # stored ids are "<conversation>/<dia_id>" (a prefix may hold "/" itself); bare ids work too
    assert evidence_recall(("D1:1", "D2:1"), ["team/conv-1/D1:1", "D2:1"]) == 1.0
    assert evidence_recall(("D1:1",), ["c/D1:10", "c/D11:1"]) == 0.0  # no prefix matching


def test_no_gold_evidence_is_refused_not_scored() -> None:
    with pytest.raises(ValueError, match="no gold evidence"):
        evidence_recall((), ["c/D1:1"])


def test_gold_evidence_splits_drops_unknown_ids_and_repeats() -> None:
    raw = ["D1:1; D2:1", "D1:1", "D", "D:11:26", "D9:99", " D1:2 ", ""]
    assert gold_evidence(raw, VALID) == ("D1:1", "D2:1", "D1:2")


def test_gold_evidence_of_only_unknown_ids_is_empty() -> None:
    assert gold_evidence(["D7:1", "D:1:2"], VALID) == ()


def _conversation(questions: list[Question]) -> Conversation:
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    messages = [MessageIn(id=f"conv-9/{d}", owner="conv-9", session_id="conv-9/session_1",
                          speaker="Ann", text=f"turn {d}", timestamp=at) for d in sorted(VALID)]
    return Conversation(sample_id="conv-9", messages=messages, questions=questions)


def test_questions_without_real_evidence_are_left_out_and_counted() -> None:
    conv = _conversation([
        Question(question="q1", answer="a", category=1, evidence=["D1:1", "D1:1; D2:2", "D8:1"]),
        Question(question="q2", answer="a", category=2, evidence=["D9:9", "D"]),
        Question(question="q5", answer="a", category=5, evidence=["D1:1"]),
    ])
    probes, skipped = probes_of([conv])
    assert [(p.query, p.gold) for p in probes] == [("q1", ("D1:1", "D2:2"))]
    assert skipped == {"category_5": 1, "no_valid_evidence": 1, "evidence_ids_dropped": 4}
    # the one scored question: one of its two evidence turns returned
    assert evidence_recall(probes[0].gold, ["conv-9/D2:2", "conv-9/D1:3"]) == 0.5
