"""Re-embedding the whole database with another model (other dimensions too) and back: vectors
made again from the texts they came from, the model recorded, the vector indexes rebuilt and
ONLINE, a finished run is a no-op, the old model is refused until it is back."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.documents.models import DocumentIn
from graphmem.errors import SchemaMismatch
from graphmem.models import MessageIn
from graphmem.ops.reembed import reembed
from graphmem.procedural.models import TraceIn
from graphmem.service import Memory
from tests.integration.helpers import msg, owner
from tests.integration.test_procedural import drain, run

TURNS = ["I moved to Porto in March.", "Do you like it there?",
         "Yes! The light on the river at dusk is wonderful."]


class HashEmbedder:
    """A deterministic 8-dimension stand-in model (another name, other dimensions)."""

    name = "test-hash-8"
    dimensions = 8

    @staticmethod
    def vector(text: str) -> list[float]:
        raw = [b - 127.5 for b in hashlib.sha256(text.encode()).digest()[:8]]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]


def _sentences(cypher: Any, tenant: str) -> list[dict[str, Any]]:
    return cypher("MATCH (s:Sentence {tenant: $t})-[:PART_OF]->(m:Message) "
                  "RETURN s.id AS id, s.embedding AS e, m.speaker + ': ' + s.text AS text "
                  "ORDER BY id", t=tenant)


def _vector_indexes(cypher: Any) -> dict[str, tuple[int, str]]:
    rows = cypher("SHOW VECTOR INDEXES YIELD name, options, state "
                  "RETURN name, options.indexConfig.`vector.dimensions` AS dims, state")
    return {r["name"]: (r["dims"], r["state"]) for r in rows}


def test_reembed_to_another_model_and_back(memory: Memory, tenant: str, cypher: Any,
                                           env: None) -> None:
    who, real = owner(), memory.embedder
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TURNS)])
    memory.former.form(memory.stores(tenant),
                       who, "s1")  # an episode and turn windows, embedded too
    good = ["get_order", "cancel_order"]  # two successful runs: cases and a skill
    memory.procedural.ingest(memory.stores(tenant),
                             [TraceIn.model_validate(run(who, n, "success", good))
                                      for n in (1, 2)])
    docs = memory.for_tenant(tenant).documents
    for i, text in enumerate(["Glaciers carve valleys.", "Bread rises with yeast.",
                              "Rockets climb to orbit."]):
        docs.ingest(DocumentIn(owner=who, key=f"note/{i}", content=text))
    docs.build_topics(who)  # chunks and topics: vectors too
    drain(memory, tenant)
    before = _sentences(cypher, tenant)
    try:
        report = reembed(memory.store, HashEmbedder(), batch=2)
        assert (report.previous, report.model, report.indexes_rebuilt) == (
            real.name, "test-hash-8", True)
        assert report.nodes["Sentence"] >= len(before) and report.nodes["Episode"] >= 1
        assert report.nodes["Window"] >= 1
        window = cypher("MATCH (w:Window {tenant: $t, owner: $o}) RETURN w.embedding AS e, "
                        "w.search_text AS text LIMIT 1", t=tenant, o=who)
        assert window and window[0]["e"] == pytest.approx(HashEmbedder.vector(window[0]["text"]))
        for row in _sentences(cypher, tenant):
            assert row["e"] == pytest.approx(HashEmbedder.vector(row["text"]))
        episode = cypher("MATCH (e:Episode {tenant: $t, owner: $o}) RETURN e.embedding AS e, "
                         "e.search_text AS text", t=tenant, o=who)
        assert episode and episode[0]["e"] == pytest.approx(HashEmbedder.vector(episode[0]["text"]))
        cases = cypher("MATCH (c:Case {tenant: $t, owner: $o}) RETURN c.embedding AS e, "
                       "CASE WHEN coalesce(c.masked_intent, '') <> '' THEN c.masked_intent "
                       "ELSE c.intent END AS text", t=tenant, o=who)
        assert len(cases) == 2 and report.nodes["Case"] >= 2 and report.nodes["Skill"] >= 1
        for row in cases:
            assert row["e"] == pytest.approx(HashEmbedder.vector(row["text"]))
        mean = [a + b for a, b in zip(cases[0]["e"], cases[1]["e"], strict=True)]
        norm = math.sqrt(sum(x * x for x in mean))
        skill = cypher("MATCH (s:Skill {tenant: $t, owner: $o}) RETURN s.embedding AS e",
                       t=tenant, o=who)
        assert skill and skill[0]["e"] == pytest.approx([x / norm for x in mean])
        chunks = cypher("MATCH (c:Chunk {tenant: $t, owner: $o}) RETURN c.embedding AS e, "
                        "c.search_text AS text", t=tenant, o=who)
        assert len(chunks) == 3 and report.nodes["Chunk"] >= 3
        for row in chunks:
            assert row["e"] == pytest.approx(HashEmbedder.vector(row["text"]))
        topics = cypher("MATCH (t:Topic {tenant: $t, owner: $o}) RETURN t.embedding AS e",
                        t=tenant, o=who)
        assert topics and report.nodes["Topic"] >= len(topics)
        assert all(len(t["e"]) == 8 for t in topics)
        assert cypher("MATCH (g:GraphMeta {key: 'embedding'}) RETURN g.model AS m, "
                      "g.dimensions AS d") == [{"m": "test-hash-8", "d": 8}]
        assert set(_vector_indexes(cypher).values()) == {(8, "ONLINE")}
        with pytest.raises(SchemaMismatch):  # the old model is refused now
            memory.store.apply_schema(real.name, real.dimensions)
        again = reembed(memory.store, HashEmbedder())  # finished: nothing left to do
        assert again.nodes == {"Sentence": 0, "Fact": 0, "Episode": 0, "Window": 0, "Case": 0,
                               "Chunk": 0, "Skill": 0, "Topic": 0}
        assert not again.indexes_rebuilt
    finally:
        back = reembed(memory.store, real)
    assert back.indexes_rebuilt and back.model == real.name
    assert set(_vector_indexes(cypher).values()) == {(real.dimensions, "ONLINE")}
    for old, new in zip(before, _sentences(cypher, tenant), strict=True):
        # the same model again; int8 scales activations per batch, so other batch-mates than at
        # ingest move a vector a little (fp32 would give it back exactly)
        assert sum(a * b for a, b in zip(old["e"], new["e"], strict=True)) > 0.95
    memory.store.apply_schema(real.name, real.dimensions)  # accepted again
    r = CliRunner().invoke(app, ["schema", "reembed"])  # the configured model: nothing to redo
    assert r.exit_code == 0, r.output
    assert f"re-embedded with {real.name}" in r.output and "Sentence 0" in r.output
    memory.ops(tenant).delete_owner(who)
