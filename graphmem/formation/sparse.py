"""Giving messages their learned-sparse word pieces (`graphmem.embedders.sparse`): per session
as part of formation, and for a whole database (`graphmem schema sparse`, after the option is
turned on over existing messages). Bounded batches; a message is encoded once per model, so an
interrupted run resumes where it stopped."""

from __future__ import annotations

from collections.abc import Callable

from graphmem.embedders.sparse import DOC_TOP, SparseEncoder, doc_text
from graphmem.store import Store
from graphmem.store.sparse import SparseStore, pending_owners

BATCH = 256
"""Messages encoded (and written in one transaction) at a time."""


def give_pieces(sparse: SparseStore, encoder: SparseEncoder, owner: str,
                session_id: str | None = None, batch: int = BATCH) -> int:
    """Encode and store the pieces of the owner's messages (of one session, or all) that lack
    them; returns how many messages took them."""
    done = 0
    while rows := sparse.pending(owner, encoder.name, batch, session_id):
        pieces = encoder.encode([r["text"] or "" for r in rows], DOC_TOP)
        done += sparse.write(encoder.name, [{"id": r["id"], "text": doc_text(w)}
                                            for r, w in zip(rows, pieces, strict=True)])
        if len(rows) < batch:
            break
    return done


def backfill(store: Store, encoder: SparseEncoder, batch: int = BATCH,
             progress: Callable[[int], None] | None = None) -> int:
    """Every tenant's messages without pieces of ``encoder``; ``progress(done)`` after each
    owner. Returns how many messages took them."""
    done = 0
    while pairs := pending_owners(store, encoder.name, 100):
        for tenant, owner in pairs:
            done += give_pieces(SparseStore(store, tenant), encoder, owner, None, batch)
            if progress is not None:
                progress(done)
    return done
