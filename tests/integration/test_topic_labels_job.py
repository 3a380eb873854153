"""LLM topic labels as a background job, end to end on the real Neo4j with a scripted
OpenAI-compatible server (a real HTTP server; no model): with an LLM configured, a build of an
owner's tree enqueues ``label_topics`` in its transaction and the worker's default handler runs
it (label, summary and model stored, usage counted); a failed call records the error on the job
and writes nothing, and the queue's retry labels the topics left. Without an LLM, no job is
enqueued and the handler leaves the keyphrase labels (no summary)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from graphmem.config import Settings
from graphmem.documents.models import DocumentIn
from graphmem.jobs import JobQueue
from graphmem.ops.worker import Worker
from graphmem.service import Memory
from graphmem.store import Store
from graphmem.store.documents import LABEL_TOPICS
from tests.integration.job_handlers import wait_for
from tests.integration.test_documents import TOPIC_NOTES
from tests.support.scripted_openai import ScriptedOpenAIServer


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture
def llm_memory(settings: Settings, memory: Memory,
               srv: ScriptedOpenAIServer) -> Iterator[Memory]:
    """A Memory with an LLM configured (the scripted server) whose jobs retry fast."""
    s = settings.model_copy(update={
        "llm_base_url": srv.base_url, "llm_model": "scripted-model", "llm_max_retries": 0,
        "job_max_attempts": 3, "job_backoff_base_s": 0.2, "job_backoff_max_s": 0.3})
    mem = Memory(s, Store(s), memory.embedder)
    yield mem
    mem.close()


def _owner_with_tree(mem: Memory, tenant: str) -> str:
    who = f"lj-{uuid.uuid4().hex[:8]}"
    tm = mem.for_tenant(tenant)
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            tm.documents.ingest(DocumentIn(owner=who, key=f"{group}/{i}", content=text))
    tm.documents.build_topics(who)
    return who


def test_the_build_enqueues_the_job_and_the_worker_labels_the_topics(
        llm_memory: Memory, tenant: str, srv: ScriptedOpenAIServer) -> None:
    assert llm_memory.documents.llm is not None
    srv.default(json={"label": "Notes on one subject", "summary": "Short notes about it."})
    who = _owner_with_tree(llm_memory, tenant)
    q = JobQueue(llm_memory.store)
    jobs = [j for j in q.list(tenant, owner=who) if j.kind == LABEL_TOPICS]
    assert len(jobs) == 1 and jobs[0].payload == {"owner": who}
    worker = Worker(llm_memory, tenant=tenant)  # the default handlers
    assert LABEL_TOPICS in worker.handlers
    while worker.run_once():
        pass
    job = q.get(tenant, jobs[0].id)
    cats = [t for t in llm_memory.for_tenant(tenant).documents.topics(who)
            if t.kind == "category"]
    assert job.state == "done" and job.result is not None
    assert job.result["labelled"] == len(cats) and job.result["model"] == "scripted-model"
    assert all(t.label == "Notes on one subject" and t.summary == "Short notes about it."
               and t.label_model == "scripted-model" and t.keyphrases for t in cats)
    assert len(srv.requests) == len(cats)
    # a rebuild with the same members: ids and LLM labels kept, no new job
    llm_memory.for_tenant(tenant).documents.build_topics(who)
    assert [j.id for j in q.list(tenant, owner=who) if j.kind == LABEL_TOPICS] == [job.id]


def test_a_failure_is_recorded_on_the_job_and_the_retry_labels_the_rest(
        llm_memory: Memory, tenant: str, srv: ScriptedOpenAIServer) -> None:
    srv.default(status=500, text="model overloaded")
    who = _owner_with_tree(llm_memory, tenant)
    q = JobQueue(llm_memory.store)
    jid = next(j.id for j in q.list(tenant, owner=who) if j.kind == LABEL_TOPICS)
    worker = Worker(llm_memory, {LABEL_TOPICS: Worker(llm_memory).handlers[LABEL_TOPICS]},
                    tenant=tenant, poll_s=0.05)
    assert worker.run_once()
    job = q.get(tenant, jid)
    assert job.state == "pending" and job.attempts == 1
    assert "LabelsFailed" in (job.last_error or "") and "not labelled" in (job.last_error or "")
    tm = llm_memory.for_tenant(tenant)
    assert all(t.label_model is None and t.summary is None and t.label == t.keyphrases
               for t in tm.documents.topics(who) if t.kind == "category")  # nothing fake
    srv.default(json={"label": "Labelled on retry", "summary": "Written by the retry."})
    wait_for(worker.run_once, timeout=10)
    job = q.get(tenant, jid)
    assert job.state == "done" and job.attempts == 2
    assert all(t.label == "Labelled on retry" for t in tm.documents.topics(who)
               if t.kind == "category")


def test_without_an_llm_no_job_and_the_keyphrases_stand(memory: Memory, tenant: str) -> None:
    assert memory.documents.llm is None
    who = _owner_with_tree(memory, tenant)
    q = JobQueue(memory.store)
    assert [j for j in q.list(tenant, owner=who) if j.kind == LABEL_TOPICS] == []
    out = memory.documents.label_topics(memory.stores(tenant), who)
    assert out["labelled"] == 0 and "no LLM" in out["skipped"]
    assert all(t.summary is None and t.label_model is None and t.label == t.keyphrases
               for t in memory.for_tenant(tenant).documents.topics(who)
               if t.kind == "category")
