// Purpose: whether every topic carries the properties topic_fulltext indexes (the migration of
//   graphmem/store/topic_index.py ran to its end, or the database began with them).
// Parameters: none
// Columns: done (boolean)
OPTIONAL MATCH (g:GraphMeta {key: 'topic_index'})
RETURN g IS NOT NULL AS done
