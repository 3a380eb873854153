// Purpose: re-embedding. Facts with an embedding not made by model $model, with the text it was
//   made from (search_text). Every tenant: this is an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: eid (elementId), text
MATCH (f:Fact)
WHERE f.embedding IS NOT NULL AND f.search_text IS NOT NULL
  AND coalesce(f.embedding_model, '') <> $model
RETURN elementId(f) AS eid, f.search_text AS text
LIMIT $limit
