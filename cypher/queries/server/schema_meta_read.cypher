// Purpose: which embedding model built this database, if any (checked before the schema changes).
// Parameters: none
// Columns: model, dimensions, created_at (no row on a new database)
MATCH (g:GraphMeta {key: 'embedding'})
RETURN g.model AS model, g.dimensions AS dimensions, g.created_at AS created_at
