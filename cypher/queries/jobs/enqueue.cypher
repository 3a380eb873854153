// Purpose: enqueue jobs of one tenant. While a job of the same kind and key is pending and not
//   yet claimed, it absorbs the request: its payload is replaced by the new one (run_after and
//   attempts are kept). Otherwise a new pending job is created, with the next generation number
//   of its kind+key (id = slot + '-' + generation). The unclaimed pending job is the one holding
//   the `slot` (unique per tenant; claiming removes it, so work enqueued after a job started
//   gets a follow-up job). It is locked before its slot is read again (through a fresh MATCH:
//   no value read before the lock is reused), so a job a claimer took meanwhile is never
//   written to. Locks are taken node first, slot index entry second, as the claim does (hence
//   the index hints: a lookup by slot would lock its index entry first). Concurrent enqueues
//   creating the same new job may deadlock; Neo4j aborts one and the driver retries it. A MERGE
//   that finds a job another enqueue created meanwhile writes nothing: enqueued = false, and
//   the caller runs the row again (then the first branch updates it under its lock).
// Parameters: $tenant, $max_attempts (int), $jobs: list of {kind, key, slot, owner (or null),
//   payload_json} (one row per slot)
// Columns: slot, id, created (true: a new job), enqueued (false: nothing written, run the row
//   again)
UNWIND $jobs AS job
OPTIONAL MATCH (seen:Job {tenant: $tenant, kind: job.kind, key: job.key})
  USING INDEX seen:Job(tenant, kind, key)
  WHERE seen.slot = job.slot
OPTIONAL CALL (seen, job) {
  WITH seen, job WHERE seen IS NOT NULL
  SET seen._lock = true
  REMOVE seen._lock
  WITH seen, job
  MATCH (p:Job {tenant: $tenant, id: seen.id})
    USING INDEX p:Job(tenant, id)
  WHERE p.slot = job.slot
  SET p.payload_json = job.payload_json, p.updated_at = datetime()
  RETURN p
}
OPTIONAL CALL (p, job) {
  WITH job WHERE p IS NULL
  MERGE (j:Job {tenant: $tenant, slot: job.slot})
    ON CREATE SET
      j._new = true, j.kind = job.kind, j.key = job.key, j.state = 'pending', j.attempts = 0,
      j.max_attempts = $max_attempts, j.created_at = datetime(), j.run_after = datetime(),
      j.updated_at = datetime(), j.payload_json = job.payload_json, j.owner = job.owner
  WITH j, job, j._new IS NOT NULL AS created
  CALL (j, job, created) {
    WITH j, job WHERE created
    OPTIONAL MATCH (other:Job {tenant: $tenant, kind: job.kind, key: job.key})
    WITH j, job, coalesce(max(other.generation), 0) + 1 AS generation
    SET j.generation = generation, j.id = job.slot + '-' + toString(generation),
        j.caption = job.kind + ' ' + job.key + ' #' + toString(generation)
    REMOVE j._new
  }
  RETURN j, created
}
WITH job, coalesce(p, j) AS j, p IS NOT NULL OR coalesce(created, false) AS enqueued,
     coalesce(created, false) AS created
RETURN job.slot AS slot, j.id AS id, created, enqueued
