"""Charts of a benchmark's JSON (`graphmem.bench.plot`): valid PNG files from small figure dicts
of each bench's layout, and what each chart is drawn from."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from graphmem.bench import plot
from graphmem.cli import app

PNG = b"\x89PNG\r\n\x1a\n"

LOCOMO = {
    "methods": {
        m: {"recall": {"5": 0.3 + d, "10": 0.4 + d, "20": 0.5 + d, "50": 0.6 + d},
            "recall_by_category": {c: {"5": 0.2, "10": 0.3 + d, "20": 0.4, "50": 0.5}
                                   for c in ("1", "2", "3", "4")},
            "context_tokens": {"5": 100, "10": 200, "20": 400, "50": 900}}
        for m, d in (("fulltext", 0.0), ("rrf_expand", 0.1))
    } | {"episodes": {"recall": {"5": 0.2, "10": 0.3}, "messages_returned": {"5": 9.0}}},
    "latency_ms": {"inprocess": {"p50": 20.0, "p95": 30.0, "n": 10.0},
                   "http": {"p50": 25.0, "p95": 40.0, "n": 10.0},
                   "by_method": {"rrf_expand": {"p50": 21.0, "p95": 31.0, "n": 10.0}}},
}


def _pngs(paths: list[Path]) -> dict[str, bytes]:
    out = {}
    for p in paths:
        data = p.read_bytes()
        assert data.startswith(PNG) and len(data) > 1000, p
        out[p.name] = data
    return out


def test_locomo_figures_give_three_valid_pngs(tmp_path: Path) -> None:
    files = _pngs(plot.plot(LOCOMO, tmp_path / "charts"))
    assert set(files) == {"recall_by_budget.png", "recall_by_category.png", "latency.png"}
    series, _ = plot.recall_by_budget(LOCOMO)
    assert series["rrf_expand"] == {"5": 0.4, "10": 0.5, "20": 0.6, "50": 0.7}
    assert "episodes" in series  # recall only: a line, no category bars
    budget, cats = plot.recall_by_category(LOCOMO)
    assert budget == "10" and set(cats) == {"fulltext", "rrf_expand"}
    assert cats["rrf_expand"]["temporal"] == 0.4
    samples, percentiles = plot.latency(LOCOMO)
    assert samples == {} and set(percentiles) == {"inprocess", "http", "rrf_expand"}


def test_a_peer_run_is_drawn_beside_the_methods(tmp_path: Path) -> None:
    """`bench locomo --peer mem0`: mem0's recall is a line beside graphmem's methods, and its
    latency (and graphmem's, timed against it) bars beside theirs."""
    figures = {**LOCOMO, "peer": {
        "peer": "mem0", "recall": {"5": 0.25, "10": 0.35, "20": 0.45, "50": 0.55},
        "latency_ms": {"peer": {"p50": 9.0, "p95": 14.0}, "graphmem": {"p50": 19.0, "p95": 28.0},
                       "k": 10}}}
    series, _ = plot.recall_by_budget(figures)
    assert series["mem0 (peer)"] == {"5": 0.25, "10": 0.35, "20": 0.45, "50": 0.55}
    assert {"fulltext", "rrf_expand"} <= set(series)
    _, percentiles = plot.latency(figures)
    assert percentiles["mem0 (peer)"] == {"p50": 9.0, "p95": 14.0}
    assert percentiles["graphmem (beside mem0)"] == {"p50": 19.0, "p95": 28.0}
    with_peer = _pngs(plot.plot(figures, tmp_path / "with"))
    without = _pngs(plot.plot(LOCOMO, tmp_path / "without"))
    assert with_peer["recall_by_budget.png"] != without["recall_by_budget.png"]
    assert with_peer["latency.png"] != without["latency.png"]


def test_latency_samples_give_histograms(tmp_path: Path) -> None:
    figures = {"latency_ms": {"by_method": {
        m: {"p50": 20.0, "p95": 30.0, "samples_ms": [10.0 + i % 17 for i in range(60)]}
        for m in ("rrf_expand", "rrf_windows")}}}
    samples, _ = plot.latency(figures)
    assert set(samples) == {"rrf_expand", "rrf_windows"} and len(samples["rrf_expand"]) == 60
    assert [p.name for p in plot.plot(figures, tmp_path)] == ["latency.png"]
    _pngs([tmp_path / "latency.png"])


def test_longmemeval_and_tau_layouts(tmp_path: Path) -> None:
    lme = {"methods": {"rrf_expand": {
        "overall": {b: {"session_recall": 0.5, "turn_recall": None} for b in ("5", "10")},
        "by_type": {"multi-session": {b: {"session_recall": 0.4} for b in ("5", "10")}}}}}
    assert plot.recall_by_category(lme) == ("10", {"rrf_expand": {"multi-session": 0.4}})
    assert len(_pngs(plot.plot(lme, tmp_path / "lme"))) == 2
    tau = {"retrieval": {"action_recall": {"1": 0.6, "3": 0.8},
                         "per_task": {"4": {"recall_1": 0.5, "recall_3": 1.0}}}}
    assert plot.recall_by_budget(tau)[0] == {"skills": {"1": 0.6, "3": 0.8}}
    assert plot.recall_by_category(tau) == ("1", {"skills": {"task 4": 0.5}})
    assert len(_pngs(plot.plot(tau, tmp_path / "tau"))) == 2


def test_nothing_to_draw_writes_nothing(tmp_path: Path) -> None:
    assert plot.plot({"runs": 3}, tmp_path) == []


def test_bench_plot_command(tmp_path: Path) -> None:
    src = tmp_path / "out.json"
    src.write_text(json.dumps(LOCOMO), encoding="utf-8")
    r = CliRunner().invoke(app, ["bench", "plot", "--json", str(src), "--out",
                                 str(tmp_path / "png")])
    assert r.exit_code == 0, r.output
    assert len(_pngs(sorted((tmp_path / "png").glob("*.png")))) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    r = CliRunner().invoke(app, ["bench", "plot", "--json", str(bad), "--out", str(tmp_path)])
    assert r.exit_code == 2 and "bad.json" in r.output
