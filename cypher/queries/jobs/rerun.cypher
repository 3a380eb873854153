// Purpose: run a failed or done job again: back to pending, claimable now, attempts reset
//   (last_error is kept until the next run overwrites or completes it; reruns counts the
//   reruns). A pending or running job is left as it is.
// Parameters: $tenant, $id
// Columns: before (its state before), job (its properties after; no row: unknown id)
MATCH (j:Job {tenant: $tenant, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j, j.state AS before
FOREACH (_ IN CASE WHEN before IN ['failed', 'done'] THEN [1] ELSE [] END |
  SET j.state = 'pending', j.attempts = 0, j.run_after = datetime(), j.updated_at = datetime(),
      j.done_at = null, j.lease_until = null, j.reruns = coalesce(j.reruns, 0) + 1)
RETURN before, j {.*} AS job
