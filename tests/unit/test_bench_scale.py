"""The scale bench's generator and chart (pure; no database)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graphmem.bench import scale
from graphmem.bench.units import Probe
from graphmem.datasets.locomo import Conversation
from graphmem.models import MessageIn

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def conversation(sample: str, turns: int = 6) -> Conversation:
    lines = ["Hey Caroline, great to see you!", "Melanie, I really love that painting.",
             "Thanks! It was fun to make.", "Caroline went to the support group."]
    return Conversation(sample, [MessageIn(
        id=f"{sample}/D1:{i + 1}", owner=sample, session_id=f"{sample}/session_1",
        speaker=("Caroline", "Melanie")[i % 2], text=lines[i % len(lines)],
        timestamp=T0 + timedelta(seconds=30 * i)) for i in range(turns)])


def test_names_are_distinct_pairs() -> None:
    pairs = [tuple(scale.names_for(c, ["Caroline", "Melanie"]).values()) for c in range(1, 2000)]
    assert all(a != b for a, b in pairs)
    assert len(set(pairs)) == len(pairs)
    assert {"Caroline", "Melanie"}.isdisjoint(n for p in pairs for n in p)


def test_vary_renames_and_varies_lightly() -> None:
    names = {"Caroline": "Alice", "Melanie": "Caroline"}  # a new name may be an old one
    text = "Melanie, I really love what Caroline said."
    assert scale.vary(text, names, 0) == "Caroline, I really love what Alice said."
    assert scale.vary(text, names, 1) == "So, Caroline, I really love what Alice said."
    assert scale.vary(text, names, len(scale.PREFIXES)) == (
        "Caroline, I truly love what Alice said.")  # the next round swaps a word
    variants = {scale.vary(text, names, v) for v in range(2 * len(scale.PREFIXES))}
    assert len(variants) == 2 * len(scale.PREFIXES)


def test_a_copy_is_a_new_owner_later_in_time_with_other_texts() -> None:
    conv = conversation("conv-1")
    copy = scale.synthetic(conv, 3)
    assert [m.owner for m in copy] == ["scale-000003"] * 6
    assert [m.id for m in copy] == [f"x000003/{m.id}" for m in conv.messages]
    assert {m.session_id for m in copy} == {"x000003/conv-1/session_1"}
    assert [m.timestamp - o.timestamp for m, o in zip(copy, conv.messages, strict=True)] == [
        3 * scale.SHIFT] * 6
    assert {m.speaker for m in copy}.isdisjoint({"Caroline", "Melanie"})
    assert not {m.text for m in copy} & {m.text for m in conv.messages}
    same_owner = scale.synthetic(conv, 3, owner="conv-1")
    assert {m.owner for m in same_owner} == {"conv-1"}


def test_the_stream_cycles_through_the_conversations_without_repeating_texts() -> None:
    convs = [conversation("a"), Conversation("empty"), conversation("b")]
    messages = list(itertools.islice(scale.stream(convs), 60))
    assert [m.owner for m in messages[::6]] == [f"scale-{c:06d}" for c in range(1, 11)]
    assert [m.id.split("/")[1] for m in messages[::6]][:4] == ["a", "b", "a", "b"]
    assert len({m.id for m in messages}) == 60
    assert len({(m.speaker, m.text) for m in messages}) == 60


def test_batches_take_exactly_the_count() -> None:
    source = iter(range(1000))
    got = list(scale.batches(source, 250, 100))  # type: ignore[arg-type]
    assert [len(b) for b in got] == [100, 100, 50]
    assert next(source) == 250  # nothing past the count was consumed
    assert list(scale.batches(iter(range(3)), 10, 100)) == [[0, 1, 2]]  # type: ignore[arg-type]


def test_select_spreads_the_questions() -> None:
    probes = [Probe("o", f"q{i}", 1 + i % 4, ("D1:1",)) for i in range(100)]
    picked = scale.select(probes, 10)
    assert [p.query for p in picked] == [f"q{i}" for i in range(0, 100, 10)]
    assert scale.select(probes[:5], 10) == probes[:5]


def test_the_chart_and_the_table(tmp_path: Path) -> None:
    def point(n: int, ms: float) -> dict[str, object]:
        return {"messages": n, "owners": n // 400, "chunk_messages": n, "chunk_seconds": 10.0,
                "ingest_messages_per_s": 100.0, "rss_mb": 900.0, "store_mb": n / 100,
                "search": {m: {"p50": ms, "p95": 2 * ms, "n": 5.0, "recall_at_10": 0.7}
                           for m in scale.METHODS}}

    out = {"mode": "many_owners", "questions": 5, "budget": 10,
           "neo4j_memory": {"heap": "2.00GiB", "pagecache": "1.00GiB"},
           "checkpoints": [point(10_000, 20.0), point(100_000, 30.0)], "estimate_1m_hours": 2.8}
    [png] = scale.plot_curve(out, tmp_path)
    assert png.name == "scale.png" and png.read_bytes()[:4] == b"\x89PNG"
    text = scale.report(out)
    assert "100000 msgs" in text and "rrf_expand p50 30.0 p95 60.0" in text and "~2.8 h" in text
    assert scale.plot_curve({"checkpoints": []}, tmp_path) == []


class CountingEmbedder:
    """A deterministic 8-dimensional embedder that counts the texts it embeds."""

    name = "counting"
    dimensions = 8

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        out = []
        for t in texts:
            v = [float((hash(t) >> (4 * i)) % 7 + 1) for i in range(8)]
            n = math.sqrt(sum(x * x for x in v))
            out.append([x / n for x in v])
        return out


def test_a_copy_shares_its_source_key() -> None:
    conv = conversation("conv-1", 12)
    names = {"Caroline", "Melanie"}
    for copy in (1, 7, 60):
        for real, syn in zip(conv.messages, scale.synthetic(conv, copy), strict=True):
            assert (scale.source_key(f"{syn.speaker}: {syn.text}", names)
                    == scale.source_key(f"{real.speaker}: {real.text}", names))
    assert scale.source_key("Caroline: Hey!", names) != scale.source_key("Caroline: Bye!", names)


def test_reused_vectors_embed_each_source_once_and_perturb_copies() -> None:
    conv = conversation("conv-1", 4)
    inner = CountingEmbedder()
    reuse = scale.ReusedVectors(inner, {"Caroline", "Melanie"})
    real = [f"{m.speaker}: {m.text}" for m in conv.messages]
    copies = [f"{m.speaker}: {m.text}" for m in scale.synthetic(conv, 3)]
    first = reuse.embed(real)
    assert first == inner.embed(real)  # a source text gets the model's own vector
    inner.texts.clear()
    again = reuse.embed(copies)
    assert inner.texts == []  # no copy reached the model
    assert reuse.embed(copies) == again  # deterministic
    for src, cp in zip(first, again, strict=True):
        assert cp != src
        assert math.isclose(sum(x * x for x in cp), 1.0, rel_tol=1e-9)
        assert sum(a * b for a, b in zip(src, cp, strict=True)) > 0.5
    assert reuse.reused == 2 * len(copies)  # two calls of the copies
