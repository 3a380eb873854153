// Purpose: enqueue jobs of one tenant. While a job of the same kind and key is pending and not
//   yet claimed, it absorbs the request: its payload is replaced by the new one (run_after and
//   attempts are kept). Otherwise a new pending job is created, with the next generation number
//   of its kind+key (id = slot + '-' + generation). The unclaimed pending job is found by its
//   `slot`, unique per tenant, so MERGE is atomic under concurrency; claiming removes the slot,
//   so work enqueued after a job started gets a follow-up job. The matched job is locked and its
//   slot read again: `pending` false means a claimer took it meanwhile (enqueue that row again).
// Parameters: $tenant, $max_attempts (int), $jobs: list of {kind, key, slot, payload_json}
//   (one row per slot)
// Columns: id, created (true: a new job), pending (false: claimed meanwhile, enqueue again)
UNWIND $jobs AS job
MERGE (j:Job {tenant: $tenant, slot: job.slot})
  ON CREATE SET
    j._new = true, j.kind = job.kind, j.key = job.key, j.state = 'pending', j.attempts = 0,
    j.max_attempts = $max_attempts, j.created_at = datetime(), j.run_after = datetime()
SET j.payload_json = job.payload_json, j.updated_at = datetime()
WITH j, job, j._new IS NOT NULL AS created
REMOVE j._new
WITH j, job, created
CALL (j, job, created) {
  WITH j, job WHERE created
  OPTIONAL MATCH (p:Job {tenant: $tenant, kind: job.kind, key: job.key})
  WITH j, job, coalesce(max(p.generation), 0) + 1 AS generation
  SET j.generation = generation, j.id = job.slot + '-' + toString(generation),
      j.caption = job.kind + ' ' + job.key + ' #' + toString(generation)
}
RETURN j.id AS id, created, j.slot IS NOT NULL AS pending
