// Purpose: a tenant's jobs, most recently changed first, optionally of one state only, and of
//   one owner only.
// Parameters: $tenant, $state (string, or null: every state), $owner (string, or null: every
//   owner's), $skip, $limit
// Columns: job (what a reader is shown of it: its properties but the claim token, its times as
//   microseconds since the epoch, <name>_us: the driver reads a datetime ~75x slower than an
//   integer, and a page holds six per job)
MATCH (j:Job {tenant: $tenant})
WHERE ($state IS NULL OR j.state = $state) AND ($owner IS NULL OR j.owner = $owner)
WITH j ORDER BY j.updated_at DESC, j.id
SKIP $skip LIMIT $limit
RETURN j {.tenant, .id, .kind, .key, .state, .attempts, .max_attempts, .generation, .reruns,
  .owner, .worker, .caption, .last_error, .payload_json, .result_json,
  created_at_us: j.created_at.epochSeconds * 1000000 + j.created_at.microsecond,
  updated_at_us: j.updated_at.epochSeconds * 1000000 + j.updated_at.microsecond,
  run_after_us: j.run_after.epochSeconds * 1000000 + j.run_after.microsecond,
  lease_until_us: j.lease_until.epochSeconds * 1000000 + j.lease_until.microsecond,
  started_at_us: j.started_at.epochSeconds * 1000000 + j.started_at.microsecond,
  done_at_us: j.done_at.epochSeconds * 1000000 + j.done_at.microsecond} AS job
