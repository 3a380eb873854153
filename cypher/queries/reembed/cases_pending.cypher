// Purpose: re-embedding. Cases with an embedding not made by model $model, with the text it was
//   made from (the case's request with its identifiers masked, else its intent, else its
//   request; its first 2000 characters). Every tenant: an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: eid (elementId), text
MATCH (c:Case)
WHERE c.embedding IS NOT NULL AND coalesce(c.embedding_model, '') <> $model
RETURN elementId(c) AS eid,
       left(CASE WHEN coalesce(c.masked_intent, '') <> '' THEN c.masked_intent
                 WHEN coalesce(c.intent, '') <> '' THEN c.intent
                 WHEN coalesce(c.request, '') <> '' THEN c.request
                 ELSE '(no request)' END, 2000) AS text
LIMIT $limit
