"""The job queue in Neo4j: `:Job` nodes (see `graphmem.jobs` for the model and the rules).

Every query but ``claim`` is bound to a tenant; ``claim`` serves every tenant (or one) because
workers do. Times are Neo4j's clock (``datetime()`` in the Cypher): one clock for all workers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from neo4j import ManagedTransaction

from graphmem import cypher
from graphmem.errors import Contended
from graphmem.store.times import epoch_times

if TYPE_CHECKING:
    from graphmem.store.connection import Connection, Row

FORM_SESSION = "form_session"
KIND = re.compile(r"[A-Za-z0-9_.]{1,64}")
ENQUEUE_ROUNDS = 5


@dataclass(frozen=True)
class NewJob:
    """Work to enqueue: ``kind`` names its handler, ``key`` what it works on."""

    kind: str
    key: str
    payload: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None
    """Whose data the job works on, if anyone's (forgetting an owner can find its jobs)."""

    def __post_init__(self) -> None:
        if not KIND.fullmatch(self.kind):
            raise ValueError(f"job kind {self.kind!r}: 1-64 letters, digits, '_' or '.'")

    @property
    def slot(self) -> str:
        """Deterministic per (kind, key) and URL-safe; job ids are ``<slot>-<generation>``."""
        digest = hashlib.sha256(f"{self.kind}\x1f{self.key}".encode()).hexdigest()[:20]
        return f"{self.kind}-{digest}"


def job_key(*parts: str) -> str:
    """A job key made of several names, unambiguous and still readable: the parts joined by
    ``/``, each with ``%`` and ``/`` percent-encoded (owner ``c/a`` + session ``x`` gives
    ``c%2Fa/x``, owner ``c`` + session ``a/x`` gives ``c/a%2Fx``). Parts without ``%`` or ``/``
    are kept as they are, so keys of such names are the same as before the encoding."""
    return "/".join(p.replace("%", "%25").replace("/", "%2F") for p in parts)


def job_key_parts(key: str) -> list[str]:
    """The parts of a `job_key` (its inverse)."""
    return [unquote(p) for p in key.split("/")]


def form_session_jobs(sessions: Iterable[Row]) -> list[NewJob]:
    """One ``form_session`` job per session ({owner, session_id, ...} rows), keyed by
    ``job_key(owner, session_id)``. The handler reads owner and session from the payload, never
    from the key."""
    return [NewJob(FORM_SESSION, job_key(s["owner"], s["session_id"]),
                   {"owner": s["owner"], "session_id": s["session_id"]}, s["owner"])
            for s in sessions]


def enqueue_tx(
    tx: ManagedTransaction, tenant: str, jobs: list[NewJob], max_attempts: int
) -> list[Row]:
    """Enqueue inside the caller's transaction (so the jobs commit with the work that made
    them). A row the query could not place (a racing enqueue created its job meanwhile) runs
    again; rows still unplaced after `ENQUEUE_ROUNDS` raise `Contended` (the store layer then
    runs the caller's whole transaction again). Returns [{id, created}] per distinct (kind,
    key)."""
    todo = {j.slot: j for j in jobs}  # the last payload of a (kind, key) wins
    done: dict[str, Row] = {}
    for _ in range(ENQUEUE_ROUNDS):
        if not todo:
            break
        rows = tx.run(cypher.load("queries/jobs/enqueue"), tenant=tenant,
                      max_attempts=max_attempts, jobs=[_row(j) for j in todo.values()]).data()
        for r in rows:
            if r["enqueued"]:
                done[r["slot"]] = {"id": r["id"], "created": r["created"]}
        todo = {s: j for s, j in todo.items() if s not in done}
    if todo:
        raise Contended(f"could not enqueue {sorted(todo)} in {ENQUEUE_ROUNDS} rounds")
    return list(done.values())


def _row(job: NewJob) -> Row:
    return {"kind": job.kind, "key": job.key, "slot": job.slot, "owner": job.owner,
            "payload_json": json.dumps(job.payload, sort_keys=True)}


class JobStore:
    """The queries of the job queue; rows are plain dicts of the `:Job` node's properties."""

    def __init__(self, store: Connection) -> None:
        self._store = store

    def enqueue(self, tenant: str, jobs: list[NewJob], max_attempts: int) -> list[Row]:
        result: list[Row] = self._store.write_tx(
            lambda tx: enqueue_tx(tx, tenant, jobs, max_attempts))
        return result

    def claim(self, worker: str, claim: str, lease_s: float, kinds: list[str],
              tenant: str | None, spread: int) -> tuple[Row | None, bool]:
        """(job, claimed): (None, False) when nothing is claimable; (job, False) when a racing
        claimer won it (try again)."""
        rows = self._store.run("queries/jobs/claim", write=True, worker=worker, claim=claim,
                               lease_ms=_ms(lease_s), kinds=kinds, tenant=tenant, spread=spread)
        if not rows:
            return None, False
        return rows[0]["job"], bool(rows[0]["claimed"])

    def heartbeat(self, tenant: str, id_: str, claim: str, lease_s: float) -> bool:
        rows = self._store.run("queries/jobs/heartbeat", write=True, tenant=tenant, id=id_,
                               claim=claim, lease_ms=_ms(lease_s))
        return bool(rows)

    def complete(self, tenant: str, id_: str, claim: str,
                 result_json: str | None = None) -> Row | None:
        rows = self._store.run("queries/jobs/complete", write=True, tenant=tenant, id=id_,
                               claim=claim, result_json=result_json)
        return rows[0]["job"] if rows else None

    def fail(self, tenant: str, id_: str, claim: str, error: str, retry: bool,
             backoff_s: float) -> Row | None:
        rows = self._store.run("queries/jobs/fail", write=True, tenant=tenant, id=id_,
                               claim=claim, error=error, retry=retry, backoff_ms=_ms(backoff_s))
        return rows[0]["job"] if rows else None

    def rerun(self, tenant: str, id_: str) -> tuple[str, Row] | None:
        """(state before, job after), or None for an unknown id."""
        rows = self._store.run("queries/jobs/rerun", write=True, tenant=tenant, id=id_)
        return (rows[0]["before"], rows[0]["job"]) if rows else None

    def get(self, tenant: str, id_: str) -> Row | None:
        rows = self._store.run("queries/jobs/get", tenant=tenant, id=id_)
        return rows[0]["job"] if rows else None

    def list(self, tenant: str, state: str | None, skip: int, limit: int,
             owner: str | None = None) -> list[Row]:
        rows = self._store.run("queries/jobs/list", tenant=tenant, state=state, owner=owner,
                               skip=skip, limit=limit)
        return [epoch_times(r["job"]) for r in rows]

    def counts(self, tenant: str, owner: str | None = None) -> dict[str, int]:
        return {r["state"]: r["jobs"] for r in self._store.run("queries/jobs/counts",
                                                                tenant=tenant, owner=owner)}

    def counts_all(self, states: Iterable[str], cap: int) -> dict[str, int]:
        """Jobs per state over every tenant, each capped at ``cap`` (operators' metrics only)."""
        rows = self._store.run("queries/jobs/counts_all", states=[*states], cap=cap)
        return {r["state"]: r["jobs"] for r in rows}

    def prune_done(self, tenant: str | None, before: datetime, limit: int) -> int:
        rows = self._store.run("queries/jobs/prune_done", write=True, tenant=tenant,
                               before=before, limit=limit)
        return int(rows[0]["removed"])


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))
