// Purpose: how many jobs a tenant has in each state.
// Parameters: $tenant
// Columns: state, jobs
MATCH (j:Job {tenant: $tenant})
RETURN j.state AS state, count(*) AS jobs
