// Purpose: claim the oldest claimable job for a worker, atomically: a pending job whose run_after
//   has passed, or a running job whose lease expired (its worker died). Across tenants by design
//   (a worker serves every tenant), unless $tenant is given. Racing claimers may pick the same
//   candidate: `SET j._lock` takes its write lock first, the state is read again under the lock
//   (through a fresh MATCH, so no value read before the lock is reused), and only one claimer
//   wins; the others get claimed = false and try again. A crashed worker's job that has used all
//   its attempts is marked failed instead. Times are Neo4j's clock: one clock for all workers.
//   Candidates are read per kind in index order (ORDER BY the whole index key lets the planner
//   stop after $spread rows instead of sorting the backlog).
// Parameters: $worker (id of the claimer), $claim (token of this claim), $lease_ms (int),
//   $spread (int: pick at random among the oldest $spread candidates; 1: the oldest),
//   $kinds (list of kinds the worker handles), $tenant (string, or null: any tenant)
// Columns: job (the job's properties after the claim), claimed (true: the caller owns it)
UNWIND $kinds AS kind
CALL (kind) {
  MATCH (c:Job)
  WHERE c.state = 'pending' AND c.kind = kind AND c.run_after <= datetime()
    AND ($tenant IS NULL OR c.tenant = $tenant)
  RETURN c, c.run_after AS since ORDER BY c.state, c.kind, c.run_after LIMIT $spread
  UNION ALL
  MATCH (c:Job)
  WHERE c.state = 'running' AND c.kind = kind AND c.lease_until < datetime()
    AND ($tenant IS NULL OR c.tenant = $tenant)
  RETURN c, c.lease_until AS since ORDER BY c.state, c.kind, c.lease_until LIMIT $spread
}
WITH c ORDER BY since LIMIT $spread
WITH collect({tenant: c.tenant, id: c.id}) AS candidates
WITH candidates[toInteger(rand() * size(candidates))] AS pick
MATCH (j:Job {tenant: pick.tenant, id: pick.id})
SET j._lock = true
REMOVE j._lock
WITH j, j.state AS state, j.attempts >= j.max_attempts AS used_up,
     (j.state = 'pending' AND j.run_after <= datetime())
     OR (j.state = 'running' AND j.lease_until < datetime()) AS free
WITH j, free AND NOT (state = 'running' AND used_up) AS claimed,
     free AND state = 'running' AND used_up AS lost
FOREACH (_ IN CASE WHEN lost THEN [1] ELSE [] END |
  SET j.state = 'failed', j.updated_at = datetime(), j.lease_until = null,
      j.last_error = 'WorkerLost: the lease of worker ' + j.worker + ' expired (attempt '
        + toString(j.attempts) + ' of ' + toString(j.max_attempts) + ')')
FOREACH (_ IN CASE WHEN claimed THEN [1] ELSE [] END |
  SET j.state = 'running', j.attempts = j.attempts + 1, j.worker = $worker, j.claim = $claim,
      j.lease_until = datetime() + duration({milliseconds: $lease_ms}),
      j.started_at = datetime(), j.updated_at = datetime(), j.slot = null)
RETURN j {.*} AS job, claimed
