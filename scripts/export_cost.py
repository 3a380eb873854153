#!/usr/bin/env python3
"""What exporting an owner costs, through the facade on the configured Neo4j.

Stores one owner of N messages (the first 500 LoCoMo turns repeated, so that every 500
consecutive messages hold the same texts; one session per 200, two metadata keys) in a scratch
tenant, exports it page after page (pages of 500, then of 1,000), then times a page
of 500 messages read from the start, the middle and the end of the owner, interleaved in random
order (a page should cost its size, not its place), and forgets the scratch tenant's owner.
Prints one JSON object.

    .venv/bin/python scripts/export_cost.py --data ../shared/data/locomo/locomo_dev.json
    .venv/bin/python scripts/export_cost.py --data FILE --messages 20000 --repeats 60
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from datetime import timedelta
from pathlib import Path

from graphmem.config import Settings
from graphmem.datasets import locomo
from graphmem.models import MessageIn
from graphmem.service import Memory
from graphmem.tenant_memory import TenantMemory

OWNER = "big"


def _messages(data: Path, n: int) -> list[MessageIn]:
    base = [m for c in locomo.load(data) for m in c.messages][:500]
    t0 = base[0].timestamp
    return [MessageIn(id=f"x{i:06d}", owner=OWNER, session_id=f"s{i // 200}",
                      speaker=base[i % len(base)].speaker, text=base[i % len(base)].text,
                      timestamp=t0 + timedelta(seconds=i),
                      metadata={"batch": i // 200, "channel": ("chat", "email")[i % 2]})
            for i in range(n)]


def _walk(tm: TenantMemory, limit: int) -> dict[str, float]:
    after, pages, records = "", [], 0
    start = time.perf_counter()
    while True:
        t = time.perf_counter()
        page = tm.export(OWNER, after, limit)
        pages.append((time.perf_counter() - t) * 1000)
        records += len(page.records)
        if page.next is None:
            break
        after = page.next
    took = time.perf_counter() - start
    return {"records": records, "s": round(took, 2), "records_per_s": round(records / took),
            "page_p50_ms": round(statistics.median(pages), 1), "pages": len(pages)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    n = max(args.messages, 1500)
    mem = Memory.open(Settings())
    tm = mem.for_tenant(f"export-cost-{int(time.time())}")
    try:
        messages = _messages(args.data, n)
        for i in range(0, n, 1000):
            tm.messages.ingest(messages[i:i + 1000])
        out: dict[str, object] = {"messages": n}
        for limit in (500, 1000):
            _walk(tm, limit)  # warm-up
            out[f"pages_of_{limit}"] = _walk(tm, limit)
        middle = n // 1000 * 500  # a multiple of 500: the same texts as the first page
        cursors = {"start": "", "middle": f"message:x{middle - 1:06d}",
                   "end": f"message:x{n - n % 500 - 501:06d}"}
        took: dict[str, list[float]] = {k: [] for k in cursors}
        rng = random.Random(1)
        for _ in range(args.repeats):
            for where in rng.sample(list(cursors), len(cursors)):
                t = time.perf_counter()
                tm.export(OWNER, cursors[where], 500)
                took[where].append((time.perf_counter() - t) * 1000)
        out["page_of_500_p50_ms"] = {k: round(statistics.median(v), 1) for k, v in took.items()}
        print(json.dumps(out, indent=1))
    finally:
        tm.messages.forget_owner(OWNER)
        mem.close()


if __name__ == "__main__":
    main()
