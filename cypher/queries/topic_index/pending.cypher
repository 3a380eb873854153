// Purpose: topics written before the label index: their tenant, owner and label, for the
//   migration to give them a scope and search_text. Every tenant: a migration.
// Parameters: none
// Columns: tenant, owner, id, label
MATCH (t:Topic)
WHERE t.scope IS NULL OR t.search_text IS NULL
RETURN t.tenant AS tenant, t.owner AS owner, t.id AS id, t.label AS label
