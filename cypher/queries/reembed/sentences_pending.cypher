// Purpose: re-embedding. Sentence units not yet embedded by model $model, with the text the
//   ingest embeds ("speaker: sentence"). Every tenant: this is an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: eid (elementId), text
MATCH (s:Sentence)-[:PART_OF]->(m:Message)
WHERE s.embedding IS NOT NULL AND coalesce(s.embedding_model, '') <> $model
RETURN elementId(s) AS eid, m.speaker + ': ' + s.text AS text
LIMIT $limit
