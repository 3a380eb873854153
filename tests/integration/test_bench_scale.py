"""`graphmem bench scale` end to end, tiny (200 messages): the checkpoints' figures, the chart,
and nothing left behind in Neo4j. The long runs are benchmarks, not tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphmem.bench import scale
from graphmem.config import Settings
from graphmem.service import Memory
from tests.integration.test_bench import _locomo_file


def test_a_tiny_scale_run(settings: Settings, memory: Memory, tmp_path: Path,
                          cypher: Any) -> None:
    data = _locomo_file(tmp_path / "l.json")  # 2 conversations of 8 turns, 8 questions
    out_json = tmp_path / "scale.json"
    out = scale.main(settings, data, [100, 200], questions=4, json_out=out_json, batch=50,
                     memory=memory)
    assert json.loads(out_json.read_text()) == json.loads(json.dumps(out, default=str))
    first, second = out["checkpoints"]
    assert (first["messages"], second["messages"]) == (100, 200)
    assert first["owners"] == 2 + 11 and second["chunk_messages"] == 100  # 8 turns a copy
    for point in (first, second):
        assert set(point["search"]) == set(scale.METHODS)
        for figures in point["search"].values():
            assert 0 < figures["p50"] <= figures["p95"] and figures["n"] == 4
            assert 0.0 <= figures["recall_at_10"] <= 1.0
        assert point["ingest_messages_per_s"] > 0 and point["rss_mb"] > 100
        assert point["store_mb"] is not None and point["store_mb"] > 0
    assert out["neo4j_memory"] == {"heap": "1.00GiB", "pagecache": "512.00MiB"}
    [png] = scale.plot_curve(out, tmp_path / "png")
    assert png.name == "scale.png" and png.read_bytes()[:4] == b"\x89PNG"
    left = cypher("MATCH (m:Message {tenant: $t}) RETURN count(m) AS n", t=out["tenant"])
    assert left == [{"n": 0}]


def test_one_owner_mode_puts_every_message_in_the_first_conversation(
        settings: Settings, memory: Memory, tmp_path: Path) -> None:
    data = _locomo_file(tmp_path / "l.json")
    out = scale.main(settings, data, [40], one_owner=True, questions=2, memory=memory)
    [point] = out["checkpoints"]
    assert out["mode"] == "one_owner" and point["owners"] == 1 and point["messages"] == 40
