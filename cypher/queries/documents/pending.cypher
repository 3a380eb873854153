// Purpose: chunks of one document version still without an embedding (a large document is
//   embedded by the background worker, a batch at a time).
// Parameters: $tenant, $id (the document version), $limit
// Columns: id, search_text
MATCH (c:Chunk {tenant: $tenant, document_id: $id})
WHERE c.embedding IS NULL
RETURN c.id AS id, c.search_text AS search_text
ORDER BY c.ordinal
LIMIT $limit
