// Purpose: extend the lease of a running job, only while the caller's claim still holds it. The
//   job is locked before its state is read, so a claimer taking it over is never extended.
// Parameters: $tenant, $id, $claim (the token of the caller's claim), $lease_ms (int)
// Columns: lease_until (no row: the job is no longer the caller's)
MATCH (j:Job {tenant: $tenant, id: $id})
SET j._lock = true
REMOVE j._lock
WITH j WHERE j.state = 'running' AND j.claim = $claim
SET j.lease_until = datetime() + duration({milliseconds: $lease_ms})
RETURN j.lease_until AS lease_until
