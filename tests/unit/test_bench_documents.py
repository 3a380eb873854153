"""The document benchmark's pure parts: the gold passage found by the answer's text, the hit
rule by character offsets, hit@k, MRR and answer-in-context on hand-made cases."""

from __future__ import annotations

import json
from pathlib import Path

from graphmem.bench.documents import Question, covers, load, score, summary


def test_the_hit_rule_is_half_of_either_span() -> None:
    gold = (100, 200)
    assert covers((100, 200), gold)
    assert covers((90, 160), gold)  # 60 of the passage's 100
    assert not covers((0, 140), gold)  # 40 of 100, and 40 of the chunk's 140
    assert covers((120, 140), gold)  # the passage covers the whole chunk
    assert not covers((200, 300), gold)


def test_gold_passages_are_found_by_the_answer_text(tmp_path: Path) -> None:
    data = {"data": [
        {"title": "Two_parts", "paragraphs": [
            {"context": "Alpha is first.", "qas": [{"id": "q1", "question": "first?",
                                                    "answers": [{"text": "Alpha",
                                                                 "answer_start": 0}]}]},
            {"context": "Beta is second.", "qas": [{"id": "q2", "question": "second?",
                                                    "answers": [{"text": "Beta",
                                                                 "answer_start": 3}]}]}]},
        {"paragraphs": [{"context": "Paper title\nIntro line.\nThe answer is here.",
                         "qas": [{"id": "q3", "question": "where?",
                                  "answers": [{"text": "answer is here",
                                               "answer_start": 999}]}]}]}]}
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(data))
    ds = load(path)
    assert ds.titles == ["Two parts", None]
    assert ds.texts[0] == "Alpha is first.\n\nBeta is second."
    _, q2, q3 = ds.questions
    assert ds.texts[0][slice(*q2.gold)] == "Beta is second."  # a wrong offset is corrected
    assert ds.texts[1][slice(*q3.gold)] == "The answer is here."
    assert len(ds.passages) == 5


def test_rank_and_packing() -> None:
    texts = ["aaa bbb\nthe answer\nccc"]
    q = Question("q", "?", 0, ["the answer"], (8, 18))
    got = score([(0, 0, 7), (0, 8, 18)], texts, q)
    assert got["rank"] == 2 and all(got["packed"].values())
    miss = score([(0, 0, 7)], texts, q)
    assert miss["rank"] is None and not any(miss["packed"].values())
    s = summary([got, miss], [1.0, 3.0])
    assert s["hit"] == {"1": 0.0, "5": 0.5, "10": 0.5} and s["mrr10"] == 0.25
