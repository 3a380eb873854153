"""The LLM tier (marker ``llm``): graphmem's LLM path against a real model, the local
llama-server with Qwen2.5-Coder-1.5B-Instruct (`graphmem.llm.local_server`), on the real Neo4j.

Assertions are on structure and grounding, never on wording: replies fit their schemas, every
cited id is a message of the stretch, facts carry their sources, something is kept. Without
the model and the server binary in the cache (`graphmem llm prepare`; `make test-llm` and CI
prepare both) every test here is skipped, saying so. The one-call smoke test runs in every
test run where they are present; the formation tests take minutes on two cores and run when
the tier is selected (`pytest -m llm`, as `make test-llm` does).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.api.app import create_app
from graphmem.config import Settings, hash_api_key
from graphmem.datasets import locomo
from graphmem.formation.llm_episodes import LLMFinder, LLMNarrator, Narrative
from graphmem.formation.observer import Turn
from graphmem.formation.prompts_episodes import narrative_messages
from graphmem.formation.run import Former
from graphmem.llm import local_server
from graphmem.llm.client import LLMClient, LLMSettings
from graphmem.llm.usage import tenant_sink
from graphmem.models import MessageIn, SearchRequest
from graphmem.service import Memory
from graphmem.store.usage import UsageStore
from tests.integration.conftest import auth
from tests.integration.helpers import owner
from tests.integration.test_formation import assert_each_message_in_one_episode, ingest

pytestmark = pytest.mark.llm

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"
DIALOGUE = {
    0: "Guess what, I adopted a beagle puppy last Saturday! His name is Biscuit.",
    1: "That's adorable! How is he settling in?",
    2: "Great, though he chews everything. I also started a new job at a bakery in Porto.",
    3: "Wow, a new dog and a new job. Do you still live in Lisbon?",
    4: "No, I moved to Porto last month to be closer to the bakery.",
    5: "I'm so happy for you. I'm training for the Berlin marathon in September.",
}


@pytest.fixture(scope="module")
def llm_settings() -> Iterator[LLMSettings]:
    """The running local server (started here, and stopped after, if it was not running)."""
    cfg = local_server.LocalLLMConfig.from_env()
    missing = [str(p) for p in (cfg.model_path, cfg.binary_path) if not p.is_file()]
    if missing:
        pytest.skip(f"local LLM not prepared ({', '.join(missing)} missing): run "
                    "`graphmem llm start` or `make test-llm`")
    started = not local_server.status(cfg).running
    st = local_server.start(cfg)
    env = local_server.llm_env(st)
    try:
        yield LLMSettings(base_url=env["GRAPHMEM_LLM_BASE_URL"], model=st.model,
                          json_mode="json_schema", timeout_s=float(env["GRAPHMEM_LLM_TIMEOUT_S"]),
                          max_retries=1, temperature=0.0)
    finally:
        if started:
            local_server.stop(cfg)


def requires_tier(request: pytest.FixtureRequest, why: str) -> None:
    """Skip a slow test unless the llm tier is selected (`pytest -m llm`, as make test-llm)."""
    if "llm" not in str(request.config.getoption("markexpr") or ""):
        pytest.skip(f"{why}: selected with `pytest -m llm` (make test-llm)")


@contextmanager
def llm_memory(settings: Settings, llm_settings: LLMSettings, memory: Memory,
               **extra: Any) -> Iterator[Memory]:
    """A Memory on the shared store and embedder, its LLM the local server; the store is not
    closed here, the reader is."""
    s = settings.model_copy(update={
        "llm_base_url": llm_settings.base_url, "llm_model": llm_settings.model,
        "llm_json_mode": "json_schema", "llm_timeout_s": llm_settings.timeout_s,
        "llm_max_retries": 1, **extra})
    mem = Memory(s, memory.store, memory.embedder)
    try:
        yield mem
    finally:
        if mem.reader is not None:
            mem.reader.close()


@pytest.fixture
def former(request: pytest.FixtureRequest, llm_settings: LLMSettings,
           memory: Memory) -> Iterator[Former]:
    requires_tier(request, "a formation run on the local model takes minutes")
    sink = tenant_sink(UsageStore(memory.store).record)
    with LLMClient(llm_settings, sink=sink) as client:
        yield Former(memory.store, memory.embedder, LLMFinder(client), LLMNarrator(client),
                     client, memory.facts)


def test_one_call_smoke(llm_settings: LLMSettings) -> None:
    """One structured call: the reply fits the schema."""
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [Turn("a", "Caroline", "I went to a LGBTQ support group yesterday.", at),
             Turn("b", "Melanie", "That's great! How did it feel?", at)]
    with LLMClient(llm_settings) as client:
        reply = client.complete_structured("episode_narrative", narrative_messages(turns),
                                           Narrative)
        (usage,) = client.ledger.records()
    assert reply.title.strip() and reply.narrative.strip()
    assert usage.ok and usage.completion_tokens > 0


def facts_of(cypher: Any, tenant: str, who: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = cypher(
        "MATCH (f:Observation {tenant: $t, owner: $o}) "
        "OPTIONAL MATCH (f)-[:SUPPORTED_BY]->(m:Message) "
        "RETURN f.content AS content, collect(m.id) AS sources, "
        "collect(m.owner) AS source_owners", t=tenant, o=who)
    return rows


def assert_extraction_recorded(cypher: Any, tenant: str, who: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = cypher(
        "MATCH (e:Episode {tenant: $t, owner: $o}) RETURN e.title AS title, "
        "e.extraction_status AS status, e.extraction_kept AS kept, e.extraction_report AS r",
        t=tenant, o=who)
    assert rows and all(r["title"] and r["status"] is not None and r["r"] for r in rows)
    return rows


def test_extraction_through_the_linker(former: Former, memory: Memory, tenant: str,
                                       cypher: Any) -> None:
    """A short dialogue full of facts: episodes formed, facts kept, each with sources that are
    the owner's messages."""
    who = owner()
    ingest(memory, tenant, who, DIALOGUE, pause=False)
    report = former.form(memory.stores(tenant), who, "s1")
    assert report.messages == len(DIALOGUE)
    assert_each_message_in_one_episode(cypher, tenant, who)
    episodes = assert_extraction_recorded(cypher, tenant, who)
    facts = facts_of(cypher, tenant, who)
    assert facts, (report.extraction, episodes)
    assert all(f["sources"] and set(f["source_owners"]) == {who} for f in facts)
    assert sum(r["kept"] for r in episodes) >= len(facts) > 0


@pytest.mark.skipif(not LOCOMO.is_file(), reason=f"LoCoMo dev file not found at {LOCOMO}")
def test_a_locomo_session(former: Former, memory: Memory, tenant: str, cypher: Any) -> None:
    """Session 1 of the first LoCoMo dev conversation, formed and extracted end to end."""
    conv = locomo.load(LOCOMO, owner_prefix=f"{tenant}-")[0]
    first = conv.messages[0].session_id
    session = [m for m in conv.messages if m.session_id == first]
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(m.model_dump()) for m in session])
    who = session[0].owner
    report = former.form(memory.stores(tenant), who, first)
    assert report.messages == len(session) and report.created >= 1
    assert_each_message_in_one_episode(cypher, tenant, who)
    assert_extraction_recorded(cypher, tenant, who)
    facts = facts_of(cypher, tenant, who)
    ids = {m.id for m in session}
    assert facts, report.extraction
    assert all(f["sources"] and set(f["sources"]) <= ids for f in facts)
    usage = memory.ops(tenant).llm_usage().totals
    assert usage["extract_facts"].proposed >= usage["extract_facts"].kept >= len(facts) > 0


def test_answer_cites_the_evidence(request: pytest.FixtureRequest, llm_settings: LLMSettings,
                                   settings: Settings, memory: Memory) -> None:
    """POST /v1/answer against the local model: the reply fits its schema, every citation is
    an item of the context it was given, and the cited messages include the one that says
    the answer (grounding, not wording)."""
    requires_tier(request, "an answer on the local model takes up to a minute")
    who = owner()
    with llm_memory(settings, llm_settings, memory,
                    api_keys={hash_api_key("key-llm"): "tenant-llm"}) as mem:
        ingest(mem, "tenant-llm", who, DIALOGUE, pause=False)
        try:
            with TestClient(create_app(mem.settings, mem)) as client:
                r = client.post("/v1/answer", headers=auth("key-llm"), json={
                    "query": "What is the name of the puppy?", "owner": who, "units": ["message"],
                    "max_tokens": 400})
            assert r.status_code == 200, r.text
            got = r.json()
            items = {i["evidence"]: i for i in got["context"]["items"]}
            assert items and got["citations"], got
            assert {c["evidence"] for c in got["citations"]} <= set(items)
            assert all(c["id"] == items[c["evidence"]]["id"] for c in got["citations"])
            assert f"{who}-s1-0" in got["sources"]  # the turn that names the puppy
            assert got["insufficient"] is False and got["answer"].strip()
            assert got["prompt_tokens"] > 0 and got["completion_tokens"] > 0
            assert mem.ops("tenant-llm").llm_usage().totals["answer"].calls >= 1
        finally:
            mem.ops("tenant-llm").delete_owner(who)


def test_decider_on_a_multi_hop_question(request: pytest.FixtureRequest,
                                         llm_settings: LLMSettings, settings: Settings,
                                         memory: Memory, tenant: str) -> None:
    """Method iterative with the LLM decider on a question that joins two turns (the puppy's
    owner, and where she works): the model's decisions fit their schema, it keeps only
    candidates it was shown, the bounds hold, its calls are the tenant's usage, and the turns
    that answer are among the hits."""
    requires_tier(request, "up to three decider calls on the local model take a minute or more")
    who = owner()
    with llm_memory(settings, llm_settings, memory, iterative_decider="llm") as mem:
        ingest(mem, tenant, who, DIALOGUE, pause=False)
        res = mem.for_tenant(tenant).search(SearchRequest(
            query="In which city does the woman who adopted the beagle puppy work?", owner=who,
            method="iterative", max_messages=4, trace=True))
        rs = mem.recipe("iterative").iterative
        used = mem.ops(tenant).llm_usage().totals["decide"].calls
    trace = res.trace
    assert trace is not None and trace.decider == "llm", trace
    assert 1 <= trace.decider_calls <= rs.iterative_rounds
    assert trace.recalls <= 1 + (rs.iterative_rounds - 1) * rs.iterative_queries
    assert trace.stop != "decider_failed" and not any(r.error for r in trace.rounds), trace
    shown = {c.id for r in trace.rounds for q in r.queries for c in q.candidates}
    assert all(len(r.follow_ups) <= rs.iterative_queries for r in trace.rounds)
    assert set(trace.core) <= shown, (trace.core, shown)
    ids = {f"{who}-s1-{n}" for n in DIALOGUE}
    hits = [h.id for h in res.hits]
    assert hits and set(hits) <= ids and len(hits) <= 4
    assert {f"{who}-s1-2", f"{who}-s1-4"} & set(hits), hits  # the turns naming Porto
    assert used >= trace.decider_calls
