"""The reader's prompt speaks of document evidence as the context renders it: its worked example
shows a document passage exactly as `graphmem.retrieval.packing` packs a chunk (the document's
title, key, version and date in the header, the section path before the text), and its rules
say to cite a passage by its evidence id and to place it by title and section path."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.answer import prompts
from graphmem.models import ChunkHit
from graphmem.retrieval.packing import chunk_pieces, pack


def test_the_example_passage_is_rendered_as_the_context_renders_a_chunk() -> None:
    text = ("The Skyline Trail loop is 5.5 miles long and climbs 1,700 feet from the Paradise "
            "visitor center.")
    hit = ChunkHit(id="d-1-v2:c0", document_id="d-1-v2", key="handbook.md", version=2,
                   title="Hiking club handbook", section=["Trails", "Skyline Trail"], start=0,
                   end=len(text), text=text, score=1.0, rules=["vector"], core=True, ordinal=0,
                   valid_from=datetime(2024, 1, 5, tzinfo=UTC))
    packed = pack(chunk_pieces([hit]), 500, datetime(2024, 3, 10, tzinfo=UTC))
    assert packed.context == prompts.EXAMPLE_DOCUMENT.replace("[e3]", "[e1]")
    assert prompts.EXAMPLE_DOCUMENT in prompts.SYSTEM


def test_the_rules_name_document_passages_their_citation_and_their_place() -> None:
    system = prompts.SYSTEM
    assert "passages of documents" in system
    assert '## document "Title" (key, version N, valid from DATE)' in system
    assert "section path" in system and "cited by its own evidence id" in system
    assert prompts.DOCUMENT_REPLY in system and '"citations": ["e3"]' in prompts.DOCUMENT_REPLY
    # every evidence id the examples cite is in the example memory, numbered in order
    ids = [f"[e{i}]" for i in range(1, 7)]
    assert [prompts.EXAMPLE_MEMORY.index(i) for i in ids] == sorted(
        prompts.EXAMPLE_MEMORY.index(i) for i in ids)
    messages = prompts.answer_messages("q?", datetime(2024, 3, 10, tzinfo=UTC), "ctx", 2)
    assert messages[0]["content"] == system and "cite only e1 .. e2" in messages[1]["content"]
