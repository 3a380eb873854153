"""Documents: storing versions (parse, chunk, embed what changed, write in one transaction),
embedding a large one in the background, chunk search (vector and fulltext lists fused by RRF,
neighbours of the same section around each hit) and reads."""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Sequence
from concurrent.futures import Executor
from datetime import UTC, datetime
from time import perf_counter
from typing import Any

import numpy as np

from graphmem.config import Settings
from graphmem.documents import labels
from graphmem.documents.chunk import Chunked, chunk, content_hash
from graphmem.documents.models import (
    ChunkHit,
    ChunkResult,
    ChunkSearch,
    Document,
    DocumentDetail,
    DocumentIn,
    DocumentWrite,
    Section,
    Topic,
    TopicDetail,
    TopicMember,
)
from graphmem.documents.parse import Parsed, parse
from graphmem.documents.ranking import collapsed_tree, document_of, topic_list
from graphmem.documents.rerank import RRF_K, Read, reranked
from graphmem.documents.topics import Member, build
from graphmem.embeddings import Embedder, query_vectors, token_counts
from graphmem.errors import Conflict, NotFound, TooLarge
from graphmem.lifecycle.restore import RestoredDocument, parsed_of
from graphmem.llm.client import LLMClient
from graphmem.retrieval.fulltext import lucene_escape
from graphmem.retrieval.fusion import Fused, fuse
from graphmem.store import TenantStores
from graphmem.store.core import Row
from graphmem.store.documents import DocumentStore
from graphmem.store.times import from_epoch_us

EMBED_BATCH = 64
"""Chunks the background job embeds and writes per transaction."""
CANDIDATES = 30
"""Hits per recall list fused (at least; 2k for a larger k)."""
FULLTEXT_WEIGHT = 1.0
"""The fulltext list's weight in the fusion (the vector list's is 1)."""
TOPIC_WEIGHT = 0.0
"""The topic list's weight in the fusion (0: off; measured in docs/benchmarks.md)."""
TREE_WEIGHT = 0.0
"""The collapsed-tree list's weight in the fusion (0: off; measured in docs/benchmarks.md)."""
TOPIC_MATCH = 1
"""Topics nearest the query whose documents the topic list raises."""
LABEL_WEIGHT = 0.0
"""The label list's weight in the fusion (0: off; measured in docs/benchmarks.md)."""
LABEL_MATCH = 1
"""Topics best matching the query's words by label whose documents the label list raises."""
TREE_TOPICS = 10
"""Topics nearest the query in the collapsed-tree pool."""
TOPIC_CHUNKS = 8
"""A document's first chunks its topic vector and label text come from."""
Timings = dict[str, float]


def document_prefix(owner: str, key: str) -> str:
    """The id stem of an owner's document key; versions are ``<stem>-v<n>``."""
    return "d-" + hashlib.sha256(f"{owner}\x1f{key}".encode()).hexdigest()[:24]


def metadata_pairs(metadata: dict[str, Any]) -> list[str]:
    """A document's metadata as the pairs chunk filters match (1 and 1.0 alike)."""
    out = []
    for k, v in metadata.items():
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():
            v = int(v)
        out.append(f"{k}\x1f{json.dumps(v, sort_keys=True)}")
    return sorted(out)


def chunk_filters(req: ChunkSearch) -> dict[str, Any]:
    """What a chunk search's lists read under: the versions valid at ``req.as_of`` (now), only
    ``req.documents``' keys and ``req.metadata``'s pairs when given."""
    return {"t": req.as_of or datetime.now(UTC), "keys": req.documents,
            "pairs": metadata_pairs(req.metadata) if req.metadata else None}


def list_depth(k: int) -> int:
    """Hits read per recall list for the k best: `CANDIDATES`, or 2k for a larger k."""
    return max(CANDIDATES, 2 * k)


def ranks(lists: dict[str, list[tuple[str, float]]]) -> dict[str, list[tuple[str, int]]]:
    """Each recall list's hits as (id, rank), what the fusion reads."""
    return {name: [(id_, rank) for rank, (id_, _) in enumerate(hits)]
            for name, hits in lists.items()}


def chunk_header(title: str | None, path: Sequence[str]) -> str:
    """What a chunk's embedded and indexed text starts with: its document's title and section
    path (a chunk is read in its place)."""
    parts = [p for p in (title, " > ".join(path)) if p]
    return "\n".join(parts)


class Documents:
    """Documents and topics of one tenant at a time: every method works over that tenant's
    stores."""

    def __init__(self, settings: Settings, embedder: Embedder,
                 pool: Executor | None = None, headers: bool = True,
                 llm: LLMClient | None = None) -> None:
        self._settings = settings
        self._embedder = embedder
        self._pool = pool
        self.headers = headers
        """Chunks are embedded and indexed with their document's title and section path."""
        self.llm = llm
        """Writes topic labels and summaries (the ``label_topics`` job) when set; None (no LLM
        configured): the keyphrase labels stand and no summary is written."""

    def count(self, texts: Sequence[str]) -> list[int]:
        return token_counts(self._embedder, texts)

    # --- writing ------------------------------------------------------------------------------
    def prepare(self, doc: DocumentIn, content: str | bytes | None = None) -> tuple[
            Parsed, Chunked]:
        """Parse and chunk (bounded: 413 naming ``content``); ``content``: bytes of an upload
        instead of ``doc.content``."""
        parsed = parse(doc.content if content is None else content, doc.media_type,
                       self._settings.max_document_chars)
        return parsed, self._chunked(parsed)

    def _chunked(self, parsed: Parsed) -> Chunked:
        chunked = chunk(parsed, self.count, self._settings.document_chunk_tokens,
                        overlap=self._settings.document_chunk_overlap)
        if len(chunked.chunks) > self._settings.max_document_chunks:
            raise TooLarge("content", f"the document makes {len(chunked.chunks)} chunks; at "
                           f"most {self._settings.max_document_chunks}",
                           limit=self._settings.max_document_chunks,
                           actual=len(chunked.chunks))
        return chunked

    def ingest(self, stores: TenantStores, doc: DocumentIn, content: str | bytes | None = None,
               by: str | None = None, timings: Timings | None = None, *,
               parsed: Parsed | None = None, now: datetime | None = None) -> DocumentWrite:
        """Store ``doc`` as a new version of its key (nothing, for the current content again):
        one transaction; chunks embedded now, reusing earlier versions' embeddings by content
        hash, or by the background worker for a large document. A restore gives the version's
        ``parsed`` text (``doc.content`` unread) and its recorded time ``now``."""
        t0 = perf_counter()
        if parsed is None:
            parsed, chunked = self.prepare(doc, content)
        else:
            chunked = self._chunked(parsed)
        now = now or datetime.now(UTC)
        valid_from = doc.valid_from or now
        title = doc.title or parsed.title
        metadata = dict(doc.metadata)
        pairs = metadata_pairs(metadata)
        paths = {s.order: s.path for s in chunked.sections}
        rows: list[Row] = []
        for c in chunked.chunks:
            text = parsed.text[c.start:c.end]
            path = list(paths.get(c.section, ())) if c.section is not None else []
            head = chunk_header(title, path) if self.headers else ""
            search_text = f"{head}\n{text}" if head else text
            rows.append({"ordinal": c.ordinal, "start": c.start, "end": c.end, "text": text,
                         "search_text": search_text, "content_hash": content_hash(search_text),
                         "owner": doc.owner, "key": doc.key, "title": title,
                         "section": c.section, "section_path": path, "tokens": c.tokens,
                         "valid_from": valid_from, "valid_to": None, "metadata_pairs": pairs,
                         "embedding": None})
        whole = hashlib.sha256(json.dumps(
            [doc.media_type, parsed.text, title, doc.source_url, metadata], sort_keys=True,
            default=str).encode()).hexdigest()[:32]
        store = stores.documents
        reuse = store.reusable(doc.owner, doc.key, sorted({r["content_hash"] for r in rows}))
        todo = [r for r in rows if r["content_hash"] not in reuse]
        inline = len({r["content_hash"] for r in todo}) <= self._settings.document_inline_chunks
        embedded = 0
        t1 = perf_counter()
        if inline and todo:
            texts = sorted({r["search_text"] for r in todo})
            vectors = dict(zip(texts, self._embedder.embed(texts), strict=True))
            for r in todo:
                r["embedding"] = vectors[r["search_text"]]
            embedded = len(texts)
        t2 = perf_counter()
        for r in rows:
            if r["content_hash"] in reuse:
                r["embedding"] = reuse[r["content_hash"]]
        sections = [{"order": s.order, "level": s.level, "path": list(s.path),
                     "title": s.path[-1], "start": s.start, "end": s.end, "parent": s.parent}
                    for s in chunked.sections]
        props = {"id_prefix": document_prefix(doc.owner, doc.key), "owner": doc.owner,
                 "key": doc.key, "title": title, "source_url": doc.source_url or parsed.url,
                 "media_type": doc.media_type.split(";", 1)[0].strip().lower(),
                 "metadata_json": json.dumps(metadata, sort_keys=True),
                 "authors": parsed.authors, "published": parsed.published, "doi": parsed.doi,
                 "text": parsed.text, "chars": len(parsed.text), "chunk_count": len(rows),
                 "valid_from": valid_from, "valid_to": None, "reason": doc.reason,
                 "recorded_by": by,
                 "state": "ready" if all(r["embedding"] is not None for r in rows)
                 else "embedding"}
        pending = props["state"] == "embedding"
        id_, previous, job = store.write(props, sections, rows, whole, doc.reason, now,
                                         job=pending)
        if timings is not None:
            timings["parse"] = timings.get("parse", 0.0) + (t1 - t0) * 1000
            timings["embed"] = timings.get("embed", 0.0) + (t2 - t1) * 1000
            timings["write"] = timings.get("write", 0.0) + (perf_counter() - t2) * 1000
        if previous is not None and previous["id"] == id_:
            return DocumentWrite(id=id_, key=doc.key, owner=doc.owner,
                                 version=previous["version"], action="unchanged",
                                 supersedes=None, state="ready", sections=len(sections),
                                 chunks=len(rows), embedded_now=0, reused=0)
        return DocumentWrite(
            id=id_, key=doc.key, owner=doc.owner, version=int(id_.rsplit("-v", 1)[1]),
            action="versioned" if previous else "created",
            supersedes=previous["id"] if previous else None,
            state="embedding" if pending else "ready", sections=len(sections), chunks=len(rows),
            embedded_now=embedded, reused=sum(r["content_hash"] in reuse for r in rows), job=job)

    def embed_pending(self, stores: TenantStores, id_: str) -> dict[str, Any]:
        """The background job: embed a version's chunks that have no embedding yet, a batch
        per transaction (each batch searchable once written). Idempotent."""
        store = stores.documents
        done = 0
        state: str | None = "embedding"
        while True:
            rows = store.pending(id_, EMBED_BATCH)
            if not rows:
                break
            vectors = self._embedder.embed([r["search_text"] for r in rows])
            state = store.set_embeddings(id_, [{"id": r["id"], "embedding": v}
                                               for r, v in zip(rows, vectors, strict=True)])
            done += len(rows)
            if state is None:
                break
        if done == 0:
            state = store.set_embeddings(id_, [])
        placed = self.place(stores, id_) if state == "ready" else None
        return {"document": id_, "embedded": done, "state": state, "placed": placed}

    def restore(self, stores: TenantStores,
                versions: Sequence[RestoredDocument]) -> tuple[int, int]:
        """Store again the document versions of an export (`graphmem.lifecycle.restore`), each
        key's oldest first, with their text, sections, valid and recorded times and reasons: the
        same version ids, SUPERSEDES chains and ``as_of`` reads; their chunks made and embedded
        again. A version already stored (by id) is left as it is. Then each owner's topic tree
        is built again from its documents (a topic's id is a hash of its owner and members:
        the same members give the same ids). Returns (created, already there)."""
        store = stores.documents
        there = set(store.existing(sorted({v.id for v in versions})))
        created = 0
        owners: set[str] = set()
        for v in versions:
            if v.id in there:
                continue
            before = f"{v.id.rsplit('-v', 1)[0]}-v{v.version - 1}"
            if v.version > 1 and before not in there:
                raise Conflict(f"document {v.key!r} of {v.owner!r}: its version {v.version} "
                               f"follows {before}, which is neither here nor in the export; "
                               "versions from the first one are restored")
            doc = DocumentIn.model_construct(
                owner=v.owner, key=v.key, title=v.title, source_url=v.source_url,
                media_type=v.media_type, content="", metadata=v.metadata,
                valid_from=v.valid_from, reason=v.reason)
            written = self.ingest(stores, doc, by=v.recorded_by, parsed=parsed_of(v),
                                  now=v.recorded_at)
            if written.id != v.id:
                raise Conflict(f"document {v.key!r} of {v.owner!r} has other versions here: "
                               f"its version {v.version} was stored as {written.id}")
            there.add(v.id)
            created += 1
            owners.add(v.owner)
        for owner in sorted(owners):
            self.build_topics(stores, owner)
        return created, len(versions) - created

    # --- search -------------------------------------------------------------------------------
    def search(self, stores: TenantStores, req: ChunkSearch, timings: Timings | None = None,
               fulltext_weight: float | None = None, topic_weight: float | None = None,
               label_weight: float | None = None,
               tree_weight: float | None = None, rerank: bool = True) -> ChunkResult:
        """Vector and fulltext lists over the owner's chunks valid at ``req.as_of``, fused by
        RRF (the fulltext list weighted `FULLTEXT_WEIGHT`, or ``fulltext_weight``); the k best,
        each followed by its neighbours (``req.neighbours``). Category-related lists, off by
        default (`TOPIC_WEIGHT`, `TREE_WEIGHT`; on with a weight above 0): ``topic_weight``,
        the candidates of the documents of the topic nearest the query (`ranking.topic_list`);
        ``label_weight`` (`LABEL_WEIGHT`), the same for the topic whose label (keyphrases, or an
        LLM's label and summary) best matches the query's words (the topic_fulltext index);
        ``tree_weight``, the collapsed-tree list over the candidates, their sections and the
        owner's topics (`ranking.collapsed_tree`). With ``rrf`` and ``rerank``, the learned
        re-ranking of the fused candidates (`rerank.reranked`: the shipped chunk ranker)."""
        store = stores.documents
        filters = chunk_filters(req)
        n = list_depth(req.k)
        lists: dict[str, list[tuple[str, float]]] = {}
        t = perf_counter()
        text_query = lucene_escape(req.query) if req.method != "vector" else ""
        pending = None
        if text_query and self._pool is not None and req.method == "rrf":
            pending = self._pool.submit(store.fulltext_search, req.owner, text_query, n, 2,
                                        filters)
        topic_w = TOPIC_WEIGHT if topic_weight is None else topic_weight
        tree_w = TREE_WEIGHT if tree_weight is None else tree_weight
        label_w = LABEL_WEIGHT if label_weight is None else label_weight
        vector: list[float] = []
        if req.method != "fulltext" or topic_w > 0 or tree_w > 0:
            vector = query_vectors(self._embedder, [req.query])[0]
        if req.method != "fulltext":
            _lap(timings, "embed", t)
            t = perf_counter()
            lists["vector"] = store.vector_search(req.owner, vector, n, 2, filters)
            _lap(timings, "vector", t)
        t = perf_counter()
        if pending is not None:
            lists["fulltext"] = pending.result()
        elif text_query:
            lists["fulltext"] = store.fulltext_search(req.owner, text_query, n, 2, filters)
        _lap(timings, "fulltext", t)
        t = perf_counter()
        ranked = ranks(lists)
        weights = {"fulltext": FULLTEXT_WEIGHT if fulltext_weight is None else fulltext_weight,
                   "topic": topic_w, "tree": tree_w, "label": label_w}
        fused = fuse(ranked, RRF_K, weights)
        if topic_w > 0 or tree_w > 0 or label_w > 0:
            words = (text_query or lucene_escape(req.query)) if label_w > 0 else None
            ranked.update(self._category_lists(store, req.owner, vector, lists, fused,
                                               topic_w > 0, tree_w > 0, words))
            fused = fuse(ranked, RRF_K, weights)
            _lap(timings, "categories", t)
            t = perf_counter()
        read: Read = {}
        if rerank and req.method == "rrf":  # the learned re-ranking (`documents.rerank`)
            fused, read = reranked(self._settings.embedder, store, req.query, fused, lists,
                                   req.k)
            _lap(timings, "rerank", t)
            t = perf_counter()
        fused = fused[:req.k]
        ids = [f.id for f in fused]
        if req.neighbours == 0 and all(i in read for i in ids):  # the re-ranking read them
            found = {i: read[i] for i in ids}
        else:
            found = {r["id"]: r for r in store.chunks(ids, req.neighbours)}
        _lap(timings, "read", t)
        out: list[ChunkHit] = []
        seen: set[str] = set()
        for f in fused:
            hit = found.get(f.id)
            if hit is None:
                continue
            around = sorted((r for r in found.values() if not r["hit"]
                             and r["document_id"] == hit["document_id"]
                             and abs(r["ordinal"] - hit["ordinal"]) <= req.neighbours
                             and r["section_id"] == hit["section_id"]),
                            key=lambda r: r["ordinal"])
            for r in [hit, *around]:
                if r["id"] in seen:
                    continue
                seen.add(r["id"])
                out.append(_hit(r, f.score, list(f.rules), r["id"] == hit["id"]))
        return ChunkResult(query=req.query, chunks=out)

    @staticmethod
    def _category_lists(store: DocumentStore, owner: str, vector: list[float],
                        lists: dict[str, list[tuple[str, float]]], fused: list[Fused],
                        topic: bool, tree: bool,
                        words: str | None = None) -> dict[str, list[tuple[str, int]]]:
        """The topic, label and collapsed-tree lists over the candidates (``fused``, best
        first); the label list with ``words`` (the query, escaped for Lucene)."""
        order = [f.id for f in fused]
        out: dict[str, list[tuple[str, int]]] = {}
        topics = store.topic_match(owner, vector, TREE_TOPICS if tree else TOPIC_MATCH) \
            if topic or tree else []
        if words is not None:
            out["label"] = topic_list(order, {d for row in store.topic_label_match(
                owner, words, LABEL_MATCH) for d in row["documents"]})
        if topic:
            out["topic"] = topic_list(order, {d for row in topics[:TOPIC_MATCH]
                                              for d in row["documents"]})
        if tree:
            members: dict[str, list[str]] = {}
            for id_ in order:
                members.setdefault(document_of(id_), []).append(id_)
            groups = [(float(s["score"]), list(s["hits"]))
                      for s in store.section_match(order, vector)]
            groups += [(float(row["score"]), [c for d in row["documents"]
                                              for c in members.get(d, [])])
                       for row in topics]
            out["tree"] = collapsed_tree(lists.get("vector", []), groups, order)
        return out

    # --- reads --------------------------------------------------------------------------------
    def listing(self, stores: TenantStores, owner: str, after: str = "", limit: int = 50,
             history: bool = False) -> list[Document]:
        return [_document(r) for r in stores.documents.listing(owner, after, limit, history)]

    def get(self, stores: TenantStores, id_: str, with_text: bool = False) -> DocumentDetail:
        row = stores.documents.get(id_)
        if row is None:
            raise NotFound(f"no document {id_!r}")
        return DocumentDetail(
            document=_document(row["d"]), versions=[_document(v) for v in row["versions"]],
            sections=[Section(id=s["id"], path=s["path"], level=s["level"], order=s["order"],
                              start=s["start"], end=s["end"]) for s in row["sections"]],
            text=row["d"]["text"] if with_text else None)

    def version_at(self, stores: TenantStores, owner: str, key: str, t: datetime) -> str:
        found = stores.documents.version_at(owner, key, t)
        if found is None:
            raise NotFound(f"no version of document {key!r} valid at {t.isoformat()}")
        return found

    def owner_of(self, stores: TenantStores, id_: str) -> str | None:
        return stores.documents.owner_of(id_)

    # --- topics -------------------------------------------------------------------------------
    def build_topics(self, stores: TenantStores, owner: str) -> dict[str, Any]:
        """Build ``owner``'s topic tree again from the current documents (the background job
        ``build_topics``, enqueued by `place` once enough changed); topics whose members did
        not change keep their ids (and an LLM's label and summary). With an LLM, the build
        enqueues a ``label_topics`` job (`label_topics`) when some topic has no LLM label."""
        t = perf_counter()
        store = stores.documents
        members = [Member(r["id"], np.mean(np.asarray(r["vectors"], dtype=np.float32), axis=0),
                          " ".join([r["title"] or "", *r["texts"]]), r["valid_from"])
                   for r in store.topic_inputs(owner, TOPIC_CHUNKS)]
        nodes = build(owner, members)
        row = store.write_topics(owner, [
            {"id": n.id, "level": n.level, "parent": n.parent, "label": n.label,
             "members": list(n.members), "documents": len(n.members), "centroid": n.centroid,
             "first_at": n.first_at, "last_at": n.last_at} for n in nodes], datetime.now(UTC),
            label_job=self.llm is not None)
        return {"owner": owner, "documents": len(members), "topics": row["topics"],
                "kept": row["kept"], "seconds": perf_counter() - t}

    def place(self, stores: TenantStores, id_: str) -> dict[str, Any]:
        """The background job ``place_document``, enqueued with every new version: the version
        joins the owner's category whose centroid is nearest its vector (the mean of its first
        chunks' embeddings, as a build reads it) and the nearest part of that category, if it
        has parts; its key's earlier versions leave their topics; counts and times follow.
        The tree is built again (a ``build_topics`` job) when the owner has none yet, or once
        the versions stored since the last build reach ``topic_rebuild_fraction`` of its
        current documents. A version not yet embedded is placed when its embedding job ends;
        one placed already, or superseded meanwhile, is left alone. Idempotent."""
        store = stores.documents
        row = store.place_inputs(id_, TOPIC_CHUNKS)
        out: dict[str, Any] = {"document": id_, "placed": [], "rebuild": False}
        if row is None or not row["current"] or row["placed"]:
            return {**out, "skipped": "gone, superseded or placed already"}
        if not row["vectors"]:
            return {**out, "skipped": "not embedded yet (placed when its embedding job ends)"}
        owner, topics = row["owner"], row["topics"]
        if topics:
            vector = _unit(np.mean(np.asarray(row["vectors"], dtype=np.float32), axis=0))
            chosen = _nearest(vector, [t for t in topics if t["level"] == 1])
            part = _nearest(vector, [t for t in topics if t["parent"] == chosen])
            out["placed"] = [t for t in (chosen, part) if t is not None]
            if out["placed"]:
                store.place(id_, out["placed"], datetime.now(UTC))
        share = row["changed"] / max(1, row["documents"])
        if not topics or share >= self._settings.topic_rebuild_fraction:
            store.enqueue_build(owner)
            out["rebuild"] = True
        return {**out, "changed": row["changed"], "documents": row["documents"]}

    def label_topics(self, stores: TenantStores, owner: str) -> dict[str, Any]:
        """The background job ``label_topics``: the LLM labels and summarises each of
        ``owner``'s topics it has not labelled yet (`graphmem.documents.labels`). Without an
        LLM, nothing: the keyphrase labels stand."""
        if self.llm is None:
            return {"owner": owner, "labelled": 0,
                    "skipped": "no LLM configured: the keyphrase labels stand"}
        return labels.label_topics(self.llm, stores.documents, owner)

    def topics(self, stores: TenantStores, owner: str, headings: bool = True) -> list[Topic]:
        """``owner``'s tree: its categories, then (with ``headings``) the headings of its
        filed documents below them."""
        return [Topic.model_validate(r) for r in stores.documents.topics(owner, headings)]

    def topic(self, stores: TenantStores, id_: str, limit: int = 100) -> TopicDetail:
        row = stores.documents.topic(id_, limit)
        if row is None:
            raise NotFound(f"no topic {id_!r}")
        return TopicDetail(topic=Topic.model_validate(row["t"]),
                           members=[TopicMember.model_validate(m) for m in row["members"]],
                           children=row["children"])

    def topic_owner(self, stores: TenantStores, id_: str) -> str | None:
        return stores.documents.topic_owner(id_)

    def with_embedder(self, embedder: Embedder) -> Documents:
        """The same service embedding with ``embedder`` (a request's `QueryMemo`, so the query
        a context request searches every unit with is embedded once)."""
        out = copy.copy(self)
        out._embedder = embedder
        return out


def _unit(x: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(x))
    return x / norm if norm else x


def _nearest(vector: np.ndarray, topics: list[Row]) -> str | None:
    """The id of the topic whose centroid is nearest ``vector`` (a unit vector) by cosine."""
    best: tuple[float, str] | None = None
    for t in topics:
        if not t.get("embedding"):
            continue
        score = float(np.dot(_unit(np.asarray(t["embedding"], dtype=np.float32)), vector))
        if best is None or score > best[0]:
            best = (score, str(t["id"]))
    return best[1] if best else None


def _lap(timings: Timings | None, stage: str, since: float) -> None:
    if timings is not None:
        timings[stage] = timings.get(stage, 0.0) + (perf_counter() - since) * 1000


def _hit(r: Row, score: float, rules: list[str], core: bool) -> ChunkHit:
    return ChunkHit(id=r["id"], document_id=r["document_id"], key=r["key"], version=r["version"],
                    title=r["title"], section=list(r["section"] or []), start=r["start"],
                    end=r["end"], text=r["text"], score=score if core else 0.0,
                    rules=rules if core else [], core=core, ordinal=r["ordinal"],
                    valid_from=from_epoch_us(r.get("valid_from_us")))


def _document(r: Row) -> Document:
    return Document(
        id=r["id"], owner=r["owner"], key=r["key"], version=r["version"], title=r.get("title"),
        source_url=r.get("source_url"), media_type=r["media_type"],
        metadata=json.loads(r.get("metadata_json") or "{}"), authors=r.get("authors") or [],
        published=r.get("published"), doi=r.get("doi"), state=r["state"], chars=r["chars"],
        chunks=r["chunk_count"], valid_from=r["valid_from"], valid_to=r.get("valid_to"),
        recorded_at=r["recorded_at"], reason=r.get("reason"), content_hash=r["content_hash"])
