// Purpose: whether this database's messages all carry their encoded metadata pairs (the
//   metadata migration, graphmem/store/metadata.py, ran to its end or the database began with
//   them).
// Parameters: none
// Columns: done (boolean)
OPTIONAL MATCH (g:GraphMeta {key: 'metadata_index'})
RETURN g IS NOT NULL AS done
