// Purpose: re-embedding. Turn windows with an embedding not made by model $model, with the text
//   it was made from (search_text). Every tenant: an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: eid (elementId), text
MATCH (w:Window)
WHERE w.embedding IS NOT NULL AND w.search_text IS NOT NULL
  AND coalesce(w.embedding_model, '') <> $model
RETURN elementId(w) AS eid, w.search_text AS text
LIMIT $limit
