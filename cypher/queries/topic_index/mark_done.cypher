// Purpose: record that every topic carries its search_text and scope (see done.cypher).
// Parameters: $now (datetime)
// Columns: none
MERGE (g:GraphMeta {key: 'topic_index'})
  ON CREATE SET g.created_at = $now
