"""Documents in the export of an owner and back, on the real Neo4j: every version of every key
(text, metadata, valid and recorded times, reasons, the SUPERSEDES chain), its sections and the
owner's topics are exported; `graphmem ingest --format export` stores the versions again in
order (the same ids, chunks, valid times and as_of reads) and builds the topic tree again, with
the same topic ids; a second import stores nothing new."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.documents.models import DocumentIn
from graphmem.lifecycle import restore
from graphmem.service import Memory

from .test_documents import FILES, FIXTURES, TOPIC_NOTES

JAN, JUN = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)


def _fill(memory: Memory, tenant: str, who: str) -> None:
    tm = memory.for_tenant(tenant)
    for name, media in FILES.items():
        raw = (FIXTURES / name).read_bytes()
        content = base64.b64encode(raw).decode() if name.endswith(".pdf") else raw.decode()
        tm.documents.ingest(DocumentIn(owner=who, key=f"files/{name}", media_type=media,
                                       content=content, metadata={"team": "ops", "n": 1},
                                       valid_from=JAN))
    guide = (FIXTURES / "guide.md").read_text()
    tm.documents.ingest(DocumentIn(
        owner=who, key="files/guide.md", media_type="text/markdown", valid_from=JUN,
        content=guide.replace("ninety days", "thirty days"), metadata={"team": "ops", "n": 1},
        reason="passwords rotate monthly"))
    html = (FIXTURES / "page.html").read_text()
    tm.documents.ingest(DocumentIn(owner=who, key="files/page.html", media_type="text/html",
                                   content=html.replace("</body>", "<p>Revised.</p></body>"),
                                   valid_from=JUN, reason="a note added"))
    for group, notes in TOPIC_NOTES.items():
        for i, text in enumerate(notes):
            tm.documents.ingest(DocumentIn(owner=who, key=f"{group}/{i}", content=text))
    tm.documents.build_topics(who)


def _chunks(cypher: Any, tenant: str, who: str) -> list[dict[str, Any]]:
    return list(cypher("MATCH (c:Chunk {tenant: $t, owner: $o}) RETURN c.id AS id, "
                       "c.start AS start, c.end AS end, c.text AS text, c.valid_from AS vf, "
                       "c.valid_to AS vt, c.embedding IS NOT NULL AS embedded ORDER BY c.id",
                       t=tenant, o=who))


def test_documents_and_topics_go_out_and_come_back_the_same(
        memory: Memory, env: None, cypher: Any, tmp_path: Path) -> None:
    who, source = f"exp-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:10]}"
    _fill(memory, source, who)
    records = [x.model_dump(mode="json") for x in memory.for_tenant(source).export_all(who)]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_kind.setdefault(rec["kind"], []).append(rec)
    # every version, its text and times; the later SUPERSEDES the earlier, with its reason
    docs = {(r["properties"]["key"], r["properties"]["version"]): r for r in by_kind["document"]}
    assert len(docs) == 4 + 2 + 9
    g1, g2 = docs[("files/guide.md", 1)], docs[("files/guide.md", 2)]
    assert "ninety days" in g1["properties"]["text"] and "thirty" in g2["properties"]["text"]
    assert g1["properties"]["text"] == (FIXTURES / "guide.md").read_text()
    assert g1["properties"]["valid_from"] == "2024-01-01T00:00:00Z"
    assert g1["properties"]["valid_to"] == "2024-06-01T00:00:00Z"
    assert g2["properties"]["metadata"] == {"team": "ops", "n": 1}
    assert g2["properties"]["media_type"] == "text/markdown"
    sup = [x for x in g2["links"] if x["type"] == "SUPERSEDES"]
    assert [(x["kind"], x["id"]) for x in sup] == [("document", g1["id"])]
    assert sup[0]["properties"]["reason"] == "passwords rotate monthly"
    assert {"text", "embedding", "tenant"} & set(by_kind["topic"][0]["properties"]) == set()
    assert any(x["type"] == "IN_TOPIC" for r in by_kind["document"] for x in r["links"])
    sections = [r for r in by_kind["section"] if r["properties"]["document_id"] == g1["id"]]
    assert [s["properties"]["title"] for s in sections] == [
        "Onboarding guide", "Accounts", "Passwords", "Expenses"]
    assert all(any(x["type"] == "PART_OF" and x["id"] == g1["id"] for x in s["links"])
               for s in sections)
    keys = {(r["kind"], r["id"]) for r in records}
    for rec in records:  # closed under its links
        for x in rec["links"]:
            assert (x["kind"], x["id"]) in keys, (rec["kind"], rec["id"], x)

    out = tmp_path / "export.jsonl"
    runner = CliRunner()
    r = runner.invoke(app, ["export", "--owner", who, "--tenant", source, "--out", str(out)])
    assert r.exit_code == 0, r.output
    target = f"t-{uuid.uuid4().hex[:10]}"
    r = runner.invoke(app, ["ingest", str(out), "--format", "export", "--tenant", target])
    assert r.exit_code == 0, r.output
    assert "15 document versions (15 new)" in r.stdout
    again = [x.model_dump(mode="json") for x in memory.for_tenant(target).export_all(who)]

    def kind(rs: list[dict[str, Any]], k: str, drop: frozenset[str] = frozenset()) -> Any:
        return sorted((r["id"], {p: v for p, v in r["properties"].items() if p not in drop},
                       r["links"]) for r in rs if r["kind"] == k)

    # the same versions: ids, text, times (valid and recorded), reasons, chain, topics
    assert kind(again, "document") == kind(records, "document")
    assert kind(again, "section") == kind(records, "section")
    when = frozenset({"created_at", "updated_at", "built_at"})  # the tree is built again
    assert kind(again, "topic", when) == kind(records, "topic", when)
    assert _chunks(cypher, target, who) == _chunks(cypher, source, who)
    for tm in (memory.for_tenant(source), memory.for_tenant(target)):
        march = tm.documents.version_at(who, "files/guide.md", datetime(2024, 3, 1, tzinfo=UTC))
        assert march.document.id == g1["id"]
        found = tm.documents.search(_search(who, "how often do passwords rotate"))
        assert "thirty days" in found.chunks[0].text
    r = runner.invoke(app, ["ingest", str(out), "--format", "export", "--tenant", target])
    assert r.exit_code == 0, r.output
    assert "15 document versions (0 new)" in r.stdout


def _search(who: str, query: str) -> Any:
    from graphmem.documents.models import ChunkSearch

    return ChunkSearch(owner=who, query=query, k=1)


def test_the_text_of_html_and_pdf_reads_back_into_the_same_blocks(memory: Memory) -> None:
    """HTML and PDF text was extracted: restored from the text and its sections, it parses into
    the blocks the file gave (so the same sections and chunks)."""
    from graphmem.documents.parse import parse

    who, tenant = f"exp-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:10]}"
    _fill(memory, tenant, who)
    records = list(memory.for_tenant(tenant).export_all(who))
    for doc in restore.documents_of(records):
        if doc.key not in ("files/page.html", "files/report.pdf") or doc.version != 1:
            continue
        raw = (FIXTURES / doc.key.split("/")[1]).read_bytes()
        assert restore.parsed_of(doc).blocks == parse(raw, doc.media_type).blocks
        assert json.dumps(doc.metadata) == '{"n": 1, "team": "ops"}'
