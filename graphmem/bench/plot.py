"""Charts of a benchmark's JSON figures (`graphmem bench ... --plot DIR`, `graphmem bench plot`):
a pure function from the figures (the dict a bench writes with ``--json``) to PNG files.

* ``recall_by_budget.png``: recall per message budget, one line per method;
* ``recall_by_category.png``: recall per question category (or type, or task) at one budget,
  bars grouped by method;
* ``latency.png``: a histogram per method when the figures hold the samples
  (``samples_ms``), else p50 / p95 bars.

It reads the LoCoMo (``methods.*.recall``, ``recall_by_category``, ``latency_ms``), LongMemEval
(``methods.*.overall``, ``by_type``) and tau-bench (``retrieval.action_recall``, ``per_task``)
layouts; a chart whose figures are absent is not drawn. A peer run beside graphmem (``peer``:
``--peer mem0``) is drawn beside graphmem's methods, named ``<peer> (peer)``: its recall per
budget, and its search latency with graphmem's measured against it (``graphmem (beside
<peer>)``). Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
"""LoCoMo's question categories."""
PREFERRED_BUDGET = "10"

Series = dict[str, dict[str, float]]
"""method -> {x label -> value}"""


def plot(out: Mapping[str, Any], directory: Path, budget: str | None = None) -> list[Path]:
    """Write the charts of ``out`` into ``directory`` (created); returns the files written.
    ``budget``: the budget of the per-category chart (default 10, else the first)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "charts need matplotlib: pip install 'graphmem[plot]'", name=exc.name) from exc

    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(fig: Figure, name: str) -> None:
        FigureCanvasAgg(fig)
        fig.tight_layout()
        path = directory / name
        fig.savefig(path, format="png", dpi=110)
        written.append(path)

    by_budget, x_label = recall_by_budget(out)
    if by_budget:
        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot()
        for method, points in by_budget.items():
            xs = sorted(points, key=_order)
            ax.plot(xs, [points[x] for x in xs], marker="o", label=method)
        ax.set_xlabel(x_label)
        ax.set_ylabel("recall")
        ax.set_ylim(0, 1)
        ax.set_title("Recall by budget")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        save(fig, "recall_by_budget.png")

    chosen, by_category = recall_by_category(out, budget)
    if by_category:
        fig = Figure(figsize=(max(7.0, 0.9 * _width(by_category)), 4.5))
        ax = fig.add_subplot()
        _bars(ax, by_category)
        ax.set_ylabel("recall")
        ax.set_ylim(0, 1)
        ax.set_title(f"Recall by category at budget {chosen}")
        save(fig, "recall_by_category.png")

    samples, percentiles = latency(out)
    if samples:
        fig = Figure(figsize=(7, 1.2 + 2.0 * len(samples)))
        axes = fig.subplots(len(samples), 1, squeeze=False)[:, 0]
        for ax, (method, ms) in zip(axes, samples.items(), strict=True):
            ax.hist(ms, bins=min(40, max(5, len(ms) // 5)))
            ax.set_title(method, fontsize="small")
            ax.set_ylabel("searches")
        axes[-1].set_xlabel("latency (ms)")
        save(fig, "latency.png")
    elif percentiles:
        fig = Figure(figsize=(max(7.0, 1.2 * len(percentiles)), 4.5))
        ax = fig.add_subplot()
        by_stat = {stat: {m: v[stat] for m, v in percentiles.items()} for stat in ("p50", "p95")}
        _bars(ax, by_stat)
        ax.set_ylabel("latency (ms)")
        ax.set_title("Search latency")
        save(fig, "latency.png")
    return written


def recall_by_budget(out: Mapping[str, Any]) -> tuple[Series, str]:
    """{method: {budget: recall}} and the x axis' name."""
    methods = out.get("methods")
    series: Series = {}
    if isinstance(methods, Mapping):
        for m, figures in methods.items():
            if not isinstance(figures, Mapping):
                continue
            if isinstance(figures.get("recall"), Mapping):  # LoCoMo
                series[m] = _numbers(figures["recall"])
            elif isinstance(figures.get("overall"), Mapping):  # LongMemEval
                series[m] = _numbers({b: v.get("session_recall")
                                      for b, v in figures["overall"].items()})
        peer = out.get("peer")
        if isinstance(peer, Mapping) and isinstance(peer.get("recall"), Mapping):
            series[f"{_peer_name(peer)} (peer)"] = _numbers(peer["recall"])
        return {m: s for m, s in series.items() if s}, "message budget"
    retrieval = out.get("retrieval")
    if isinstance(retrieval, Mapping) and isinstance(retrieval.get("action_recall"), Mapping):
        return {"skills": _numbers(retrieval["action_recall"])}, "skills returned (k)"  # tau
    return {}, ""


def recall_by_category(out: Mapping[str, Any], budget: str | None = None
                       ) -> tuple[str, Series]:
    """(budget, {method: {category: recall}}) at ``budget`` (default 10, else the first)."""
    methods = out.get("methods")
    raw: dict[str, Mapping[str, Any]] = {}
    if isinstance(methods, Mapping):
        for m, figures in methods.items():
            if isinstance(figures, Mapping):
                cats = figures.get("recall_by_category", figures.get("by_type"))
                if isinstance(cats, Mapping):
                    raw[m] = cats
    if raw:
        budgets = {b for cats in raw.values() for per in cats.values()
                   if isinstance(per, Mapping) for b in per}
        chosen = budget or (PREFERRED_BUDGET if PREFERRED_BUDGET in budgets
                            else min(budgets, key=_order, default=""))
        series: Series = {}
        for m, cats in raw.items():
            row: dict[str, Any] = {}
            for cat, per in cats.items():
                value = per.get(chosen) if isinstance(per, Mapping) else None
                if isinstance(value, Mapping):  # LongMemEval: several scores per budget
                    value = value.get("session_recall")
                row[CATEGORY_NAMES.get(cat, cat)] = value
            if numbers := _numbers(row):
                series[m] = numbers
        return chosen, series
    retrieval = out.get("retrieval")
    if isinstance(retrieval, Mapping) and isinstance(retrieval.get("per_task"), Mapping):
        k = budget or "1"  # tau: recall of the top skill per held-out task
        tasks = {f"task {t}": v.get(f"recall_{k}") for t, v in retrieval["per_task"].items()
                 if isinstance(v, Mapping)}
        numbers = _numbers(tasks)
        return k, {"skills": numbers} if numbers else {}
    return "", {}


def latency(out: Mapping[str, Any]) -> tuple[dict[str, list[float]], dict[str, dict[str, float]]]:
    """({method: samples in ms}, {method: {p50, p95}}) from ``latency_ms`` (its per-method part
    named by method, the others by how they were measured)."""
    lat = out.get("latency_ms")
    flat: dict[str, Mapping[str, Any]] = {}
    for key, value in (lat.items() if isinstance(lat, Mapping) else ()):
        if not isinstance(value, Mapping):
            continue
        if "p50" in value:
            flat[key] = value
        else:  # {method: {p50, p95, ...}}
            flat.update((m, v) for m, v in value.items()
                        if isinstance(v, Mapping) and "p50" in v)
    peer = out.get("peer")
    beside = peer.get("latency_ms") if isinstance(peer, Mapping) else None
    if isinstance(peer, Mapping) and isinstance(beside, Mapping):  # timed in turns, same queries
        name = _peer_name(peer)
        for who, label in (("graphmem", f"graphmem (beside {name})"), ("peer", f"{name} (peer)")):
            if isinstance(beside.get(who), Mapping) and "p50" in beside[who]:
                flat[label] = beside[who]
    samples = {m: [float(x) for x in v["samples_ms"]] for m, v in flat.items()
               if isinstance(v.get("samples_ms"), list) and v["samples_ms"]}
    percentiles = {m: {"p50": float(v["p50"]), "p95": float(v.get("p95", v["p50"]))}
                   for m, v in flat.items()}
    return samples, percentiles


def _peer_name(peer: Mapping[str, Any]) -> str:
    return str(peer.get("peer") or "peer")


def _numbers(values: Mapping[str, Any]) -> dict[str, float]:
    return {str(k): float(v) for k, v in values.items()
            if isinstance(v, int | float) and not isinstance(v, bool)}


def _order(label: str) -> tuple[int, float, str]:
    try:
        return 0, float(label), ""
    except ValueError:
        return 1, 0.0, label


def _width(series: Series) -> int:
    return len({x for s in series.values() for x in s}) * max(1, len(series)) // 2 + 2


def _bars(ax: Any, series: Series) -> None:
    """Grouped bars: one group per x label, one bar per series."""
    labels = list(dict.fromkeys(x for s in series.values() for x in s))
    width = 0.8 / max(1, len(series))
    for n, (name, values) in enumerate(series.items()):
        xs = [i + (n - (len(series) - 1) / 2) * width for i in range(len(labels))]
        ax.bar(xs, [values.get(x, 0.0) for x in labels], width, label=name)
    ax.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 6 else 0,
                  ha="right" if len(labels) > 6 else "center", fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
