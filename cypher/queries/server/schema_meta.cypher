// Purpose: read, or record on first start, which embedding model built this database.
// Parameters: $model (string), $dimensions (int), $now (datetime)
// Columns: model, dimensions (as stored: the first writer's values), created_at
MERGE (g:GraphMeta {key: 'embedding'})
  ON CREATE SET g.model = $model, g.dimensions = $dimensions, g.created_at = $now
RETURN g.model AS model, g.dimensions AS dimensions, g.created_at AS created_at
