"""`graphmem bench`: the benchmarks, each a script that prints its figures (and writes them as
JSON, and charts, on request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from rich.markup import escape

from graphmem.cli.common import console, fail
from graphmem.config import Settings
from graphmem.errors import GraphMemError
from graphmem.models import Method
from graphmem.retrieval.recipes import PRESETS
from graphmem.servers import neo4j_server

bench_app = typer.Typer(help="Benchmarks (scripts that print numbers).")


def _can_plot(directory: Path | None) -> Path | None:
    """A --plot folder, checked before a long run: the charts need matplotlib."""
    import importlib.util

    if directory is not None and importlib.util.find_spec("matplotlib") is None:
        raise typer.BadParameter("charts need matplotlib: pip install 'graphmem[plot]'",
                                 param_hint="--plot")
    return directory


PlotDir = Annotated[Path | None, typer.Option(
    "--plot", file_okay=False, callback=_can_plot, help="Also write PNG charts of the figures "
    "into this folder (needs the plot extra: " + escape("pip install 'graphmem[plot]')"))]


def _plot(figures: dict[str, Any], directory: Path | None) -> None:
    """Write the charts of a bench's figures (`graphmem.bench.plot`), one line per file."""
    if directory is None:
        return
    from graphmem.bench.plot import plot

    try:
        written = plot(figures, directory)
    except (ModuleNotFoundError, OSError) as exc:
        raise fail(exc) from exc
    for path in written:
        console.print(f"chart: {path}", highlight=False)
    if not written:
        console.print("no chart: the figures hold no recall or latency", highlight=False)


@bench_app.command("locomo")
def bench_locomo(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations")] = None,
    units: Annotated[bool, typer.Option("--units/--no-units", help="Run the unit study")] = True,
    plot_dir: PlotDir = None,
    peer: Annotated[str | None, typer.Option(help="Also run this system on the same messages "
                                             "and questions, side by side: mem0 (needs "
                                             + escape("pip install 'graphmem[peer]')"))] = None,
    recall_only: Annotated[bool, typer.Option(
        "--recall-only", help="Only ingest, formation and the methods' recall (no warm-up, "
        "ablation, latency, episodes or peer)")] = False,
    methods: Annotated[str | None, typer.Option(
        help="Score only these methods, comma-separated (default: all)")] = None,
    every: Annotated[int, typer.Option(
        min=1, help="Score every N-th question only (a quicker estimate)")] = 1,
) -> None:
    """Evidence recall of fulltext / vector / rrf / rrf_expand at budgets 5-50, ingest
    throughput, search latency in-process and over HTTP. Cleans up what it wrote."""
    from graphmem.bench import locomo as bench
    from graphmem.bench.peer_mem0 import PeerUnavailable

    if peer is not None and peer != "mem0":
        raise typer.BadParameter(f"the one peer is mem0, not {peer!r}", param_hint="--peer")
    try:
        out = bench.main(Settings(), data, json_out, limit, units=units and not recall_only,
                         peer=peer, recall_only=recall_only,
                         methods=_methods(methods) if methods is not None else None,
                         every=every)
    except (GraphMemError, PeerUnavailable) as exc:
        raise fail(exc) from exc
    _plot(out, plot_dir)


@bench_app.command("ranker")
def bench_ranker(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file to train on")],
    out: Annotated[Path | None, typer.Option(
        help="Write the ranker here (JSON); copy it into "
        "graphmem/retrieval/rankers/<embedder>-<unit>/ to ship it (needed unless --method "
        "iterative)")] = None,
    method: Annotated[str, typer.Option(
        help="rrf_expand, rrf_windows or graph; iterative: that method cross-validated, a ranker "
        "fitted without each conversation re-ranking every round of its questions (writes no "
        "ranker)")] = "rrf_windows",
    preset: Annotated[str | None, typer.Option(
        help="The retrieval preset searched (default: the server's; deep adds the PageRank "
        "list)")] = None,
    tenant: Annotated[str | None, typer.Option(
        help="A tenant already holding the file, ingested and formed (default: a throwaway "
        "tenant is seeded and deleted)")] = None,
    depth: Annotated[int | None, typer.Option(
        min=1, help="Candidates the ranker re-ranks (default: 20 for rrf_expand and graph, 50 "
        "for rrf_windows)")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
) -> None:
    """Train the learned re-ranking of a method's fused candidates: recall without it, with it
    in leave-one-conversation-out cross-validation, and in sample."""
    from graphmem.bench import iterative_cv
    from graphmem.bench import ranker as bench
    from graphmem.service import Memory

    if method not in bench.DEPTH and method != "iterative":
        raise typer.BadParameter(f"one of {sorted(bench.DEPTH)} or iterative",
                                 param_hint="--method")
    if out is None and method != "iterative":
        raise typer.BadParameter("where to write the ranker", param_hint="--out")
    if preset is not None and preset not in PRESETS:
        raise typer.BadParameter(f"one of {sorted(PRESETS)}", param_hint="--preset")
    try:
        mem = Memory.open(Settings())
    except GraphMemError as exc:
        raise fail(exc) from exc
    if method == "iterative":
        try:
            figures = iterative_cv.main(mem, str(data), tenant,
                                        log=lambda s: console.print(s, highlight=False),
                                        depth=depth, preset=preset)
        finally:
            mem.close()
        console.print(iterative_cv.report(figures), highlight=False)
        if json_out is not None:
            json_out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        return
    try:
        trained, figures = bench.main(mem, str(data), method,  # type: ignore[arg-type]
                                      tenant, log=lambda s: console.print(s, highlight=False),
                                      depth=depth, preset=preset)
    finally:
        mem.close()
    for name in ("fused", "cross_validated", "in_sample"):
        r = figures[name]["recall"]
        console.print(f"{name:16s} " + "  ".join(f"@{b} {r[str(b)]:.3f}" for b in bench.BUDGETS),
                      highlight=False)
    assert out is not None
    out.write_text(json.dumps(trained.to_json(), indent=2) + "\n", encoding="utf-8")
    console.print(f"ranker: {out}", highlight=False)
    if json_out is not None:
        json_out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


def _methods(text: str) -> tuple[Method, ...]:
    known = get_args(Method)
    names = tuple(m.strip() for m in text.split(",") if m.strip())
    if not names or any(m not in known for m in names):
        raise typer.BadParameter(f"one or more of {', '.join(known)}", param_hint="--methods")
    return names  # type: ignore[return-value]


@bench_app.command("neo4j-versions")
def bench_neo4j_versions(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    conversations: Annotated[int, typer.Option(help="The first N conversations are asked")] = 2,
    questions: Annotated[int | None, typer.Option(help="At most N of their questions")] = None,
    extra: Annotated[int, typer.Option(help="Messages of the other conversations, re-owned, "
                                       "that make the large tenant")] = 30_000,
    versions: Annotated[str, typer.Option(help="Neo4j versions, comma-separated")]
        = "5.26.30,2026.08.1",
) -> None:
    """Neo4j 5.26 against 2026.x side by side (throwaway servers, searches interleaved): recall@10
    and one-shot search latency at a small tenant and at a large one."""
    from graphmem.bench import neo4j_versions as bench

    try:
        bench.main(Settings(), data, json_out, conversations, questions, extra,
                   [v.strip() for v in versions.split(",") if v.strip()])
    except (GraphMemError, neo4j_server.Neo4jServerError, ValueError) as exc:
        raise fail(exc) from exc


@bench_app.command("tau")
def bench_tau(
    data: Annotated[Path, typer.Option(help="tau-bench trajectories (a JSON list of runs): "
                                       "the runs clustered and queried")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    train: Annotated[Path | None, typer.Option(
        help="Form skills from this file's runs only and query them with --data's (transfer); "
        "without it, leave-one-task-out over --data")] = None,
    tasks: Annotated[str | None, typer.Option(
        help="Only these tasks of --data, e.g. 15-29 or 0-4,9")] = None,
    train_tasks: Annotated[str | None, typer.Option(
        help="Only these tasks of --train, e.g. 0-14")] = None,
    plot_dir: PlotDir = None,
) -> None:
    """Procedural memory: ingest runs/s, formation time, clustering ARI (task, kind, customer),
    skill retrieval (action recall and precision at 1 and 3, and their ceiling), transfer from
    --train or leave-one-task-out. Cleans up what it wrote."""
    from graphmem.bench import tau

    try:
        out = tau.run(Settings(), data, json_out, train, tasks, train_tasks)
    except (GraphMemError, ValueError) as exc:
        raise fail(exc) from exc
    _plot(out, plot_dir)


@bench_app.command("documents")
def bench_documents(
    data: Annotated[list[Path], typer.Option(help="A SQuAD-format file of documents and "
                                             "questions (repeatable)")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    peer: Annotated[str | None, typer.Option(help="Also run this peer on the same chunks: "
                                             "mem0")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions of each "
                                              "file")] = None,
    headers: Annotated[bool, typer.Option(help="Embed and index each chunk with its "
                                          "document's title and section path")] = True,
    topics: Annotated[Path | None, typer.Option(help="A SQuAD-format file whose paragraphs, "
                                                "stored as untitled notes, test the topic "
                                                "tree: NMI and ARI against the articles")] = None,
    method: Annotated[list[str] | None, typer.Option(
        help="Methods to score (repeatable; default vector, fulltext, rrf and rrf+rerank; rrf "
        "is the fused order, +rerank re-ranks it with the shipped chunk ranker, the search's "
        "default; rrf:W weighs the fulltext list W; +topic adds the topic list, +label the "
        "topic-label list, +tree the collapsed-tree list, e.g. rrf+topic+tree)")] = None,
    plot_dir: PlotDir = None,
) -> None:
    """Document retrieval: passage hit@1/5/10, MRR@10, answer-in-context at 512/1024/2048
    tokens, search latency and ingest throughput, beside BM25 and dense baselines over the same
    paragraphs (and mem0 with --peer mem0). Cleans up what it wrote."""
    from graphmem.bench import documents

    if peer not in (None, "mem0"):
        raise typer.BadParameter("the one peer is mem0", param_hint="--peer")
    try:
        out = documents.run(Settings(), data, json_out, limit, headers, peer, topics,
                            method or documents.METHODS)
    except (GraphMemError, ValueError) as exc:
        raise fail(exc) from exc
    if plot_dir is not None:
        for path in documents.plot(out, plot_dir):
            console.print(f"chart: {path}", highlight=False)


@bench_app.command("longmemeval")
def bench_longmemeval(
    data: Annotated[list[Path], typer.Option(help="A LongMemEval file (official or repackaged "
                                             "layout); repeat for one haystack of several")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    method: Annotated[list[str] | None, typer.Option(help="Methods to score (repeatable; "
                                                     "default rrf_expand and iterative)")] = None,
    plot_dir: PlotDir = None,
) -> None:
    """Evidence recall (gold sessions and turns) per message budget and question type; the
    abstention questions are counted apart. Cleans up what it wrote."""
    from graphmem.bench import longmemeval

    try:
        out = longmemeval.main(Settings(), data, json_out, method or longmemeval.METHODS)
    except GraphMemError as exc:
        raise fail(exc) from exc
    _plot(out, plot_dir)


@bench_app.command("llm")
def bench_llm(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
    conversation: Annotated[str | None, typer.Option(help="sample_id (default: the first)")] = None,
    sessions: Annotated[int, typer.Option(help="Sessions formed by the LLM")] = 2,
    questions: Annotated[int, typer.Option(help="Questions answered by the reader")] = 30,
    decider_questions: Annotated[int, typer.Option(help="Questions searched with the iterative "
                                                   "method's two deciders (the same order)")] = 10,
    answer_tokens: Annotated[int | None, typer.Option(
        min=1, help="The answers' context budget (max_tokens; default: the API's)")] = None,
) -> None:
    """The LLM path on one LoCoMo conversation against the local model (started and stopped
    here unless GRAPHMEM_LLM_* name an endpoint): extraction vs gold observations, narratives
    vs session summaries, answers, the iterative method's LLM decider, tokens. Cleans up."""
    from graphmem.bench import llm

    try:
        llm.run(Settings(), data, json_out, conversation, sessions, questions, decider_questions,
                answer_tokens)
    except GraphMemError as exc:
        raise fail(exc) from exc


@bench_app.command("scale")
def bench_scale(
    data: Annotated[Path, typer.Option(help="A LoCoMo-format JSON file (the real conversations "
                                       "the synthetic ones are copied from)")],
    sizes: Annotated[str, typer.Option(help="Checkpoints: messages in the tenant, comma "
                                       "separated")] = "10000,100000",
    one_owner: Annotated[bool, typer.Option("--one-owner", help="All synthetic messages go to "
                                            "one owner (the first conversation's)")] = False,
    questions: Annotated[int, typer.Option(min=1, help="LoCoMo questions searched per "
                                           "checkpoint")] = 100,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here "
                                                  "(after every checkpoint)")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep what was written")] = False,
    vectors: Annotated[str, typer.Option(help="embed: every text by the model; reuse: a "
                                         "synthetic turn gets its source turn's vector, "
                                         "perturbed (measures the store without the "
                                         "model's CPU)")] = "embed",
    plot_dir: PlotDir = None,
) -> None:
    """The scale curve: synthetic conversations (LoCoMo copies, new owners, shifted in time)
    ingested up to each checkpoint; search p50/p95, recall@10, ingest rate, RSS, store size."""
    from graphmem.bench import scale

    try:
        points = sorted({int(s.replace("_", "")) for s in sizes.split(",") if s.strip()})
    except ValueError:
        raise typer.BadParameter(f"not a list of numbers: {sizes!r}",
                                 param_hint="--sizes") from None
    if not points or points[0] < 1:
        raise typer.BadParameter("give at least one positive size", param_hint="--sizes")
    if not data.is_file():
        raise typer.BadParameter(f"no file {data}", param_hint="--data")
    if vectors not in scale.VECTORS:
        raise typer.BadParameter(" or ".join(scale.VECTORS), param_hint="--vectors")
    try:
        out = scale.main(Settings(), data, points, one_owner=one_owner, questions=questions,
                         json_out=json_out, keep=keep, vectors=vectors)
    except GraphMemError as exc:
        raise fail(exc) from exc
    if plot_dir is not None:
        for path in scale.plot_curve(out, plot_dir):
            console.print(f"chart: {path}", highlight=False)


def _numbers(text: str, option: str) -> list[int]:
    """A comma-separated list of positive numbers (a bad one is a usage error naming the option)."""
    try:
        numbers = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise typer.BadParameter(f"not a list of numbers: {text!r}", param_hint=option) from None
    if not numbers or min(numbers) < 1:
        raise typer.BadParameter("give at least one number, each >= 1", param_hint=option)
    return numbers


@bench_app.command("load")
def bench_load(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="A LoCoMo-format JSON "
                                       "file: the messages seeded and the questions searched")],
    url: Annotated[str | None, typer.Option(help="A running server to load (default: start "
                                            "`graphmem serve` on a free port)")] = None,
    key: Annotated[str | None, typer.Option(envvar="GRAPHMEM_API_KEY", help="API key for "
                                            "--url (its tenant is seeded and loaded)")] = None,
    workers: Annotated[str, typer.Option(help="API processes of the started server; several, "
                                         "comma separated, start one server each, measured "
                                         "in turn at every level")] = "1",
    clients: Annotated[str, typer.Option(help="Search clients per level, comma separated")]
    = "1,2,4,8,16",
    writers: Annotated[int, typer.Option(min=0, help="Write clients at every level")] = 1,
    seconds: Annotated[float, typer.Option(min=1, help="Duration of each level")] = 20.0,
    limit: Annotated[int | None, typer.Option(help="Conversations seeded")] = 2,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the figures here")] = None,
) -> None:
    """Concurrent search and write clients against the HTTP API at several concurrency levels:
    requests/s, p50/p95/p99, errors by kind, CPU of the API processes and Neo4j. Cleans up."""
    from graphmem.bench import load

    levels, processes = _numbers(clients, "--clients"), _numbers(workers, "--workers")
    neo4j_pid = neo4j_server.status(Settings()).pid if url is None else None
    try:
        load.main(data, url=url, key=key, workers=processes, levels=levels,
                  writers=writers, seconds=seconds, limit=limit, neo4j_pid=neo4j_pid,
                  json_out=json_out)
    except (GraphMemError, RuntimeError, ValueError) as exc:
        raise fail(exc) from exc


@bench_app.command("plot")
def bench_plot(
    json_in: Annotated[Path, typer.Option("--json", exists=True, dir_okay=False, help="A "
                                          "bench's figures (written with --json)")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the PNG charts")],
) -> None:
    """Charts of an existing bench JSON: recall per budget per method, recall per category at
    budget 10, latency per method; for a scale curve, its chart."""
    try:
        figures = json.loads(json_in.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise typer.BadParameter(f"{json_in}: not JSON ({exc})", param_hint="--json") from None
    if not isinstance(figures, dict):
        raise typer.BadParameter(f"{json_in}: not a JSON object", param_hint="--json")
    if "checkpoints" in figures:  # a scale curve (graphmem bench scale)
        from graphmem.bench import scale

        for path in scale.plot_curve(figures, out_dir):
            console.print(f"chart: {path}", highlight=False)
        return
    _plot(figures, out_dir)
