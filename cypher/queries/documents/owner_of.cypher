// Purpose: the owner of a document version.
// Parameters: $tenant, $id
// Columns: owner
MATCH (d:Document {tenant: $tenant, id: $id})
RETURN d.owner AS owner
