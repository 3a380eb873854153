// Purpose: which of the given message ids a tenant has stored already (ingest embeds only the
//   others).
// Parameters: $tenant, $ids
// Columns: id
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
RETURN m.id AS id
