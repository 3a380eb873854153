// Purpose: re-embedding. Document chunks with an embedding not made by model $model, with the
//   text it was made from (search_text: the title and section path, then the passage). Chunks
//   still waiting for their first embedding are left to the document's embedding job. Every
//   tenant: an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: eid (elementId), text
MATCH (c:Chunk)
WHERE c.embedding IS NOT NULL AND c.search_text IS NOT NULL
  AND coalesce(c.embedding_model, '') <> $model
RETURN elementId(c) AS eid, c.search_text AS text
LIMIT $limit
