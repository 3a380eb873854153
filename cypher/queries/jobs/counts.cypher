// Purpose: how many jobs a tenant has in each state (of one owner only, with $owner).
// Parameters: $tenant, $owner (string, or null: every owner's)
// Columns: state, jobs
MATCH (j:Job {tenant: $tenant})
WHERE $owner IS NULL OR j.owner = $owner
RETURN j.state AS state, count(*) AS jobs
