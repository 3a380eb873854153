#!/usr/bin/env python3
"""What a metadata filter costs a search, through the facade on the configured Neo4j.

Stores LoCoMo (every conversation of the file, formed into episodes and windows) in a scratch
tenant, each message with a ``channel`` (one of three, turn by turn) and a number ``n`` (its
place modulo 10), then searches its questions (categories 1-4) with each filter of `VARIANTS`,
the variants in random order question by question, after a warm-up; prints p50 / p95 in ms per
variant as one JSON object, and forgets the scratch owners.

    .venv/bin/python scripts/filter_cost.py --data ../shared/data/locomo/locomo_dev.json
    .venv/bin/python scripts/filter_cost.py --data FILE --method rrf_windows
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.models import SearchRequest
from graphmem.service import Memory

VARIANTS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "channel chat (a third)": {"channel": "chat"},
    "channel ne chat (two thirds)": {"channel": {"ne": "chat"}},
    "n in [3, 4, 5] (3/10)": {"n": [3, 4, 5]},
    "n gte 3, lt 6 (the same 3/10)": {"n": {"gte": 3, "lt": 6}},
    "n = 0 (1/10)": {"n": 0},
    "n lt 1 (the same 1/10)": {"n": {"lt": 1}},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON")
    parser.add_argument("--method", default="rrf_expand")
    parser.add_argument("--warmup", type=int, default=40)
    args = parser.parse_args()
    convs = locomo.load(args.data)
    mem = Memory.open(Settings())
    tenant = f"filter-cost-{int(time.time())}"
    tm = mem.for_tenant(tenant)
    owners = [c.messages[0].owner for c in convs]
    try:
        for c in convs:
            msgs = [m.model_copy(update={"metadata": {"channel": ("chat", "email", "sms")[i % 3],
                                                      "n": i % 10}})
                    for i, m in enumerate(c.messages)]
            for i in range(0, len(msgs), 200):
                tm.messages.ingest(msgs[i:i + 200])
            for session in sorted({m.session_id for m in msgs}):
                mem.former.form(mem.stores(tenant), msgs[0].owner, session)
        rng = random.Random(7)
        questions = [(c.messages[0].owner, q.question) for c in convs for q in c.questions
                     if q.category in (1, 2, 3, 4)]
        rng.shuffle(questions)
        took: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for n, (owner, question) in enumerate(questions[:args.warmup] + questions):
            for name, wanted in rng.sample(list(VARIANTS.items()), len(VARIANTS)):
                req = SearchRequest(query=question, owner=owner, method=args.method,
                                    metadata=wanted)
                t = time.perf_counter()
                tm.search(req)
                if n >= args.warmup:
                    took[name].append((time.perf_counter() - t) * 1000)
        out = {name: {"p50": round(statistics.median(xs), 1),
                      "p95": round(sorted(xs)[int(0.95 * len(xs))], 1)}
               for name, xs in took.items()}
        print(json.dumps({"method": args.method, "questions": len(questions), "ms": out},
                         indent=1))
    finally:
        for owner in owners:
            tm.messages.forget_owner(owner)
        mem.close()


if __name__ == "__main__":
    main()
