"""The small demo memory that `make run` loads: a few conversations of two owners, and facts about
them (the release example: r1 on March 12, replaced by r2 on March 18), and one run of alice's
release agent (a staging restore plus a health check: the case behind a rollback recovery skill,
under staging conditions)."""

from __future__ import annotations

import json
from pathlib import Path

from graphmem.datasets import jsonl
from graphmem.facts.models import ObservationIn, ProfileOp
from graphmem.procedural.models import TraceBatch
from graphmem.service import Memory

HERE = Path(__file__).parent
MESSAGES = HERE / "demo_messages.jsonl"
FACTS = HERE / "demo_facts.json"
TRACES = HERE / "demo_traces.json"


def load(mem: Memory, tenant: str) -> None:
    """Idempotent: loading twice stores everything once."""
    tm = mem.for_tenant(tenant)
    for batch in jsonl.read(MESSAGES):
        tm.messages.ingest(batch)
    facts = json.loads(FACTS.read_text(encoding="utf-8"))
    for item in facts["observations"]:  # one at a time, in order: each revises the previous
        tm.facts.observe([ObservationIn.model_validate(item)])
    tm.profile.apply([ProfileOp.model_validate(o) for o in facts["profile_ops"]])
    runs = TraceBatch.model_validate_json(TRACES.read_text(encoding="utf-8")).traces
    tm.traces.ingest(runs)
    stores = mem.stores(tenant)
    for run in runs:  # formed now, so the skill is there at once (the jobs find it done)
        mem.procedural.form_trace(stores, run.id or "", jobs=False)
    for owner in sorted({run.owner for run in runs}):
        mem.procedural.form_skills(stores, owner)
