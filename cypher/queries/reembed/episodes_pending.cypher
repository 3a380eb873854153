// Purpose: re-embedding. Episodes with an embedding not made by model $model, with the text it
//   was made from (search_text: title and narrative). Every tenant: an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: eid (elementId), text
MATCH (e:Episode)
WHERE e.embedding IS NOT NULL AND e.search_text IS NOT NULL
  AND coalesce(e.embedding_model, '') <> $model
RETURN elementId(e) AS eid, e.search_text AS text
LIMIT $limit
