// Purpose: which of the given source ids name no message, fact or episode of the tenant.
// Parameters: $tenant, $ids
// Columns: missing (list of ids)
UNWIND $ids AS id
OPTIONAL MATCH (m:Message {tenant: $tenant, id: id})
OPTIONAL MATCH (f:Fact {tenant: $tenant, id: id})
OPTIONAL MATCH (e:Episode {tenant: $tenant, id: id})
WITH id WHERE m IS NULL AND f IS NULL AND e IS NULL
RETURN collect(id) AS missing
