"""`graphmem bench locomo` end to end on a small synthetic LoCoMo-format file: the OUT.json keys
the issue names, the cold (warm-up) and measured ingest, and nothing left behind in Neo4j."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphmem.cli import app

LINES = [
    ("Ana", "I adopted a grey cat named Pixel last week."),
    ("Ben", "Nice! I started learning the cello in March."),
    ("Ana", "My sister moved to Lisbon for a new job."),
    ("Ben", "I ran my first marathon in Berlin."),
]


def _locomo_file(path: Path) -> Path:
    def session(offset: int) -> list[dict[str, str]]:
        return [{"speaker": who, "dia_id": f"D{offset}:{i + 1}", "text": text}
                for i, (who, text) in enumerate(LINES)]

    conv = {"speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session(1),
            "session_2_date_time": "10:04 am on 2 June, 2023", "session_2": session(2)}
    qa = [{"question": "What is the name of Ana's cat?", "answer": "Pixel", "category": 4,
           "evidence": ["D1:1"]},
          {"question": "When did Ben start the cello?", "answer": "March 2023", "category": 2,
           "evidence": ["D1:2"]},
          {"question": "Where does Ana's sister live?", "answer": "Lisbon", "category": 1,
           "evidence": ["D1:3", "D2:3"]},
          {"question": "Which city hosted Ben's marathon?", "answer": "Berlin", "category": 3,
           "evidence": ["D2:4"]},
          {"question": "Adversarial", "adversarial_answer": "-", "category": 5,
           "evidence": ["D1:1"]}]
    data = [{"sample_id": f"syn-{n}", "conversation": conv, "qa": qa} for n in (1, 2)]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_bench_writes_the_figures_and_cleans_up(env: None, tmp_path: Path, cypher: Any) -> None:
    out = tmp_path / "out.json"
    data = _locomo_file(tmp_path / "l.json")
    r = CliRunner().invoke(app, ["bench", "locomo", "--data", str(data), "--json", str(out),
                                 "--no-units"])
    assert r.exit_code == 0, r.output
    fig = json.loads(out.read_text())
    assert fig["questions"] == 8 and fig["skipped"]["category_5"] == 2
    for method in ("fulltext", "vector", "rrf", "rrf_expand", "graph"):
        for budget in ("5", "10", "20", "50"):
            assert 0.0 <= fig["methods"][method]["recall"][budget] <= 1.0
            for cat in ("1", "2", "3", "4"):
                assert 0.0 <= fig["methods"][method]["recall_by_category"][cat][budget] <= 1.0
    assert fig["methods"]["rrf_expand"]["recall"]["50"] == 1.0  # 8 messages: all returned
    assert fig["methods"]["rrf_windows"]["recall"]["50"] == 1.0
    assert fig["methods"]["graph"]["recall"]["50"] == 1.0
    assert fig["latency_ms"]["by_method"]["graph"]["p50"] > 0
    stages = fig["latency_ms"]["stages"]["mean_ms"]
    assert {"embed", "hybrid", "expansion", "pack", "serialise"} <= set(stages)  # one round trip
    assert "Where the time goes" in r.output
    # the ablation reruns the pipeline on cached lists: its ends are the two methods exactly
    for variant, method in (("all", "rrf_windows"), ("none", "rrf_expand")):
        assert fig["ablation"][variant]["recall"] == pytest.approx(
            fig["methods"][method]["recall"])
    ingest = fig["ingest"]
    assert ingest["messages"] == ingest["cold"]["messages"] == 16
    assert ingest["messages_per_s"] > 0 and len(ingest["warmup_messages_per_s"]) == 2
    assert ingest["cold"]["messages_per_s"] == ingest["warmup_messages_per_s"][0]
    for where in ("inprocess", "http"):
        assert 0 < fig["latency_ms"][where]["p50"] <= fig["latency_ms"][where]["p95"]
    assert "Ingest: 16 messages" in r.output and "warm-up passes" in r.output
    left = cypher("MATCH (n) WHERE n.tenant STARTS WITH $t RETURN count(n) AS n", t=fig["tenant"])
    assert left == [{"n": 0}]  # the measured pass and the warm-up pass are both deleted


def test_recall_only_with_the_sparse_list_scores_it_on_and_off(
        env: None, tmp_path: Path, cypher: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_SPARSE", "splade-tiny")
    out = tmp_path / "out.json"
    data = _locomo_file(tmp_path / "l.json")
    r = CliRunner().invoke(app, ["bench", "locomo", "--data", str(data), "--json", str(out),
                                 "--recall-only", "--limit", "1", "--every", "2"])
    assert r.exit_code == 0, r.output
    fig = json.loads(out.read_text())
    assert fig["every"] == 2 and fig["questions"] == 2  # of the conversation's 4
    assert "2 questions (categories 1-4, one in 2)" in r.output
    assert fig["settings"]["sparse"] and fig["settings"]["sparse_model"] == "splade-tiny"
    assert set(fig["without_sparse"]) == {"rrf_expand", "graph", "iterative"}
    assert fig["methods"]["rrf_expand"]["recall"]["50"] == 1.0
    assert fig["without_sparse"]["rrf_expand"]["recall"]["50"] == 1.0
    assert "latency_ms" not in fig and "ablation" not in fig and fig["ingest"]["cold"] is None
    assert "without the sparse list" in r.output and "(recall only)" in r.output
    left = cypher("MATCH (n) WHERE n.tenant STARTS WITH $t RETURN count(n) AS n", t=fig["tenant"])
    assert left == [{"n": 0}]
