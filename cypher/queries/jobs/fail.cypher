// Purpose: record a failed run of a job the caller holds: back to pending, claimable after the
//   backoff ($retry), or failed for good (kept, listed, re-runnable). last_error says why.
// Parameters: $tenant, $id, $claim (the token of the caller's claim), $error (string),
//   $retry (bool), $backoff_ms (int: delay before the next attempt)
// Columns: job (its properties; no row: the job is no longer the caller's)
MATCH (j:Job {tenant: $tenant, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.state = 'running' AND j.claim = $claim
SET j.last_error = $error, j.updated_at = datetime(), j.lease_until = null,
    j.state = CASE WHEN $retry THEN 'pending' ELSE 'failed' END,
    j.run_after = CASE WHEN $retry THEN datetime() + duration({milliseconds: $backoff_ms})
                  ELSE j.run_after END
RETURN j {.*} AS job
