"""Documents in Neo4j, bound to one tenant: versions written under their key's lock in one
transaction (with the embedding job of a large one), chunk recall lists, and reads."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import InvalidInput
from graphmem.store.jobs import NewJob, enqueue_tx
from graphmem.store.scope import scope_token
from graphmem.store.tenant import TenantBound, first_fetch, ranked_search
from graphmem.store.times import epoch_times

if TYPE_CHECKING:
    from graphmem.store.connection import Row

EMBED_DOCUMENT = "embed_document"
"""The job kind that embeds a large document's chunks (payload: owner, id)."""
BUILD_TOPICS = "build_topics"
"""The job kind that builds an owner's topic tree again (payload: owner)."""
PLACE_DOCUMENT = "place_document"
"""The job kind that places a new document version under its nearest topics (payload: owner,
id), enqueued with every version."""
LABEL_TOPICS = "label_topics"
"""The job kind that has an LLM label and summarise an owner's topics (payload: owner),
enqueued with a build when an LLM is configured."""


def _q(tx: ManagedTransaction, name: str, **params: Any) -> list[Row]:
    return [r.data() for r in tx.run(cypher.load(f"queries/documents/{name}"), params)]


class DocumentStore(TenantBound):
    def write(self, doc: Row, sections: list[Row], chunks: list[Row], content_hash: str,
              reason: str | None, now: datetime, job: bool) -> tuple[str, Row | None, str | None]:
        """Store a version of ``doc['owner']``'s ``doc['key']`` in ONE transaction, under the
        key's lock: nothing when the current version has ``content_hash`` (returns its id and
        row, and no job); else the new version (superseding the current one) and, with ``job``,
        its embedding job. Returns (id, the previous current version or None, the job id)."""
        tenant, owner, key = self.tenant, doc["owner"], doc["key"]

        def work(tx: ManagedTransaction) -> tuple[str, Row | None, str | None]:
            rows = _q(tx, "lock", tenant=tenant, owner=owner, key=key, now=now)
            current = rows[0] if rows else None
            if current is not None and current["content_hash"] == content_hash:
                return current["id"], current, None
            version = (current["version"] if current else 0) + 1
            if current is not None and doc["valid_from"] < current["valid_from"].to_native():
                raise InvalidInput("valid_from", f"before the current version's valid_from "
                                   f"({current['valid_from'].to_native().isoformat()})")
            id_ = f"{doc['id_prefix']}-v{version}"
            props = {k: v for k, v in doc.items() if k != "id_prefix"}
            props.update(id=id_, version=version, content_hash=content_hash)
            secs = [{**s, "id": f"{id_}:s{s['order']}",
                     "parent": None if s["parent"] is None else f"{id_}:s{s['parent']}"}
                    for s in sections]
            rows_c = [{**c, "id": f"{id_}:c{c['ordinal']}", "document_id": id_,
                       "version": version,
                       "section_id": None if c["section"] is None else f"{id_}:s{c['section']}"}
                      for c in chunks]
            for c in rows_c:
                del c["section"]
            _q(tx, "write", tenant=tenant, doc=props, previous=current and current["id"],
               reason=reason, now=now, scope=scope_token(tenant, owner), sections=secs,
               chunks=rows_c)
            enqueue_tx(tx, tenant, [NewJob(PLACE_DOCUMENT, id_, {"owner": owner, "id": id_},
                                           owner)], self._store.settings.job_max_attempts)
            job_id = None
            if job:
                made = enqueue_tx(tx, tenant, [NewJob(EMBED_DOCUMENT, id_, {"owner": owner,
                                                                           "id": id_}, owner)],
                                  self._store.settings.job_max_attempts)
                job_id = made[0]["id"] if made else None
            return id_, current, job_id

        result: tuple[str, Row | None, str | None] = self._store.write_tx(work)
        return result

    def reusable(self, owner: str, key: str, hashes: list[str]) -> dict[str, list[float]]:
        """Embeddings of chunks of ``owner``'s ``key`` (any version) by content hash."""
        if not hashes:
            return {}
        rows = self._run("queries/documents/reusable", owner=owner, key=key, hashes=hashes)
        return {r["hash"]: r["embedding"] for r in rows}

    def pending(self, id_: str, limit: int) -> list[Row]:
        return self._run("queries/documents/pending", id=id_, limit=limit)

    def set_embeddings(self, id_: str, rows: list[Row]) -> str | None:
        """Store chunk embeddings; the document's state after (None: it is gone)."""
        out = self._run("queries/documents/set_embeddings", write=True, id=id_, rows=rows)
        return str(out[0]["state"]) if out else None

    # --- recall -------------------------------------------------------------------------------
    def vector_search(self, owner: str, vector: list[float], k: int, overfetch: int,
                      filters: Row) -> list[tuple[str, float]]:
        """Approximate, over-fetched then filtered; exact when the filters leave it short."""
        params = {"owner": owner, "vector": vector, **filters}
        hits, exhausted = ranked_search(self._run_plain, "queries/documents/vector_search", k,
                                        overfetch, params, widen=False)
        if len(hits) < k and not exhausted:
            hits = [(r["id"], r["score"]) for r in self._run_plain(
                "queries/documents/vector_search_exact", k=k, **params)]
        return hits

    def fulltext_search(self, owner: str, query: str, k: int, overfetch: int,
                        filters: Row) -> list[tuple[str, float]]:
        params = {"owner": owner, "query": query, **filters}
        return ranked_search(self._run_plain, "queries/documents/fulltext_search", k, overfetch,
                             params, max_fetch=first_fetch(k, overfetch) * 16)[0]

    def chunks(self, ids: list[str], reach: int = 0) -> list[Row]:
        if not ids:
            return []
        rows = self._run_plain("queries/documents/chunks", ids=ids, reach=reach)
        return list(rows[0]["chunks"]) if rows else []

    def topic_match(self, owner: str, vector: list[float], k: int) -> list[Row]:
        """The owner's ``k`` topics nearest ``vector`` with their current member documents."""
        return self._run_plain("queries/documents/topic_match", owner=owner, vector=vector, k=k)

    def topic_label_match(self, owner: str, query: str, k: int) -> list[Row]:
        """The owner's ``k`` topics whose label best matches ``query`` (Lucene, escaped), with
        their current member documents."""
        if not query.strip():
            return []
        return self._run_plain("queries/documents/topic_label_match", owner=owner, query=query,
                               k=k)

    def section_match(self, ids: list[str], vector: list[float]) -> list[Row]:
        """The sections of chunks ``ids``, scored by their chunks' mean similarity to
        ``vector``."""
        if not ids:
            return []
        return self._run_plain("queries/documents/section_match", ids=ids, vector=vector)

    # --- reads --------------------------------------------------------------------------------
    def listing(self, owner: str, after: str, limit: int, history: bool) -> list[Row]:
        rows = self._run("queries/documents/list", owner=owner, after=after, limit=limit,
                         history=history)
        return [epoch_times(r["d"]) for r in rows]

    def get(self, id_: str) -> Row | None:
        rows = self._run("queries/documents/get", id=id_)
        if not rows:
            return None
        row = rows[0]
        return {"d": epoch_times(row["d"]), "versions": [epoch_times(v) for v in row["versions"]],
                "sections": row["sections"]}

    def version_at(self, owner: str, key: str, t: datetime) -> str | None:
        rows = self._run("queries/documents/version_at", owner=owner, key=key, t=t)
        return str(rows[0]["id"]) if rows else None

    def existing(self, ids: list[str]) -> list[str]:
        """Those of the document version ids ``ids`` stored here."""
        if not ids:
            return []
        return [str(r["id"]) for r in self._run("queries/documents/existing", ids=ids)]

    def owner_of(self, id_: str) -> str | None:
        rows = self._run("queries/documents/owner_of", id=id_)
        return str(rows[0]["owner"]) if rows else None

    # --- topics -------------------------------------------------------------------------------
    def topic_inputs(self, owner: str, chunks: int) -> list[Row]:
        return self._run("queries/documents/topic_inputs", owner=owner, chunks=chunks)

    def write_topics(self, owner: str, topics: list[Row], now: datetime,
                     label_job: bool = False) -> Row:
        """Replace ``owner``'s tree with ``topics`` in one transaction (with ``label_job`` and
        a topic no LLM has labelled, a `LABEL_TOPICS` job for the owner in the same one)."""
        tenant, attempts = self.tenant, self._store.settings.job_max_attempts

        def work(tx: ManagedTransaction) -> Row:
            row = _q(tx, "write_topics", tenant=tenant, owner=owner, topics=topics, now=now,
                     scope=scope_token(tenant, owner))[0]
            if label_job and _q(tx, "unlabelled_topics", tenant=tenant,
                                owner=owner)[0]["topics"]:
                enqueue_tx(tx, tenant, [NewJob(LABEL_TOPICS, owner, {"owner": owner}, owner)],
                           attempts)
            return row

        result: Row = self._store.write_tx(work)
        return result

    def place_inputs(self, id_: str, chunks: int) -> Row | None:
        """What placing version ``id_`` in its owner's tree needs (None: no such version)."""
        rows = self._run("queries/documents/place_inputs", id=id_, chunks=chunks)
        return rows[0] if rows else None

    def place(self, id_: str, topics: list[str], now: datetime) -> int:
        """Version ``id_`` joins ``topics`` (its key's other versions leave theirs); the number
        of topics joined (0: placed already, or no longer current)."""
        rows = self._run("queries/documents/place", write=True, id=id_, topics=topics, now=now)
        return int(rows[0]["placed"]) if rows else 0

    def enqueue_build(self, owner: str) -> None:
        """Enqueue the build of ``owner``'s topic tree (a build already waiting absorbs it)."""
        tenant, attempts = self.tenant, self._store.settings.job_max_attempts
        self._store.write_tx(lambda tx: enqueue_tx(
            tx, tenant, [NewJob(BUILD_TOPICS, owner, {"owner": owner}, owner)], attempts))

    def topics(self, owner: str, headings: bool = True) -> list[Row]:
        """``owner``'s categories and, with ``headings``, its filed documents' headings."""
        return [r["t"] for r in self._run("queries/documents/topics", owner=owner,
                                          headings=headings)]

    def topics_to_label(self, owner: str, limit: int, documents: int,
                        chunks: int) -> list[Row]:
        """Up to ``limit`` of ``owner``'s topics no LLM labelled yet, with their material."""
        return self._run("queries/documents/topics_to_label", owner=owner, limit=limit,
                         documents=documents, chunks=chunks)

    def set_topic_label(self, owner: str, id_: str, label: str, summary: str, model: str,
                        now: datetime) -> bool:
        """Store an LLM's label and summary of topic ``id_``; False: the topic is gone."""
        return bool(self._run("queries/documents/set_topic_label", write=True, owner=owner,
                              id=id_, label=label, summary=summary, model=model, now=now))

    def topic(self, id_: str, limit: int) -> Row | None:
        rows = self._run("queries/documents/topic", id=id_, limit=limit)
        return rows[0] if rows else None

    def topic_owner(self, id_: str) -> str | None:
        rows = self._run("queries/documents/topic_owner", id=id_)
        return str(rows[0]["owner"]) if rows else None
