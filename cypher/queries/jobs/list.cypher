// Purpose: a tenant's jobs, most recently changed first, optionally of one state only.
// Parameters: $tenant, $state (string, or null: every state), $skip, $limit
// Columns: job (its properties)
MATCH (j:Job {tenant: $tenant})
WHERE $state IS NULL OR j.state = $state
RETURN j {.*} AS job
ORDER BY j.updated_at DESC, j.id
SKIP $skip LIMIT $limit
