// Purpose: re-embedding, last step. Record that model $model (of $dimensions) built the database.
// Parameters: $model (string), $dimensions (int), $now (datetime)
// Columns: model, dimensions
MERGE (g:GraphMeta {key: 'embedding'})
  ON CREATE SET g.created_at = $now
SET g.model = $model, g.dimensions = $dimensions, g.reembedded_at = $now
RETURN g.model AS model, g.dimensions AS dimensions
