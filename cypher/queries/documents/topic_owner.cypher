// Purpose: the owner of a topic.
// Parameters: $tenant, $id
// Columns: owner
MATCH (t:Topic {tenant: $tenant, id: $id})
RETURN t.owner AS owner
