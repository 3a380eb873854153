// Purpose: one job of a tenant.
// Parameters: $tenant, $id
// Columns: job (its properties; no row: unknown id)
MATCH (j:Job {tenant: $tenant, id: $id})
RETURN j {.*} AS job
