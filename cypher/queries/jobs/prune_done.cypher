// Purpose: retention. Delete done jobs that finished before $before, oldest first, at most
//   $limit, except the newest job of each kind+key (its generation numbers the next job, so a
//   job id is never used twice). Pending, running and failed jobs are never deleted.
// Parameters: $tenant (string, or null: every tenant), $before (datetime), $limit (int)
// Columns: removed (how many were deleted)
MATCH (j:Job)
  USING INDEX j:Job(state, done_at)
WHERE j.state = 'done' AND j.done_at < $before AND ($tenant IS NULL OR j.tenant = $tenant)
  AND EXISTS {
    MATCH (n:Job {tenant: j.tenant, kind: j.kind, key: j.key})
    WHERE n.generation > j.generation
  }
WITH j ORDER BY j.done_at LIMIT $limit
DETACH DELETE j
RETURN count(*) AS removed
