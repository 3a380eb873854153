// Purpose: mark a running job done, only if the caller's claim still holds it (a worker whose
//   lease expired and whose job was claimed again must not complete it).
// Parameters: $tenant, $id, $claim (the token of the caller's claim), $result_json (what the
//   handler reported, JSON, or null)
// Columns: job (its properties; no row: the job is no longer the caller's)
MATCH (j:Job {tenant: $tenant, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.state = 'running' AND j.claim = $claim
SET j.state = 'done', j.done_at = datetime(), j.updated_at = datetime(), j.lease_until = null,
    j.result_json = $result_json
RETURN j {.*} AS job
