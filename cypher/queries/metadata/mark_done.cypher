// Purpose: record that every message carries its encoded metadata pairs (see done.cypher).
// Parameters: $now (datetime)
// Columns: none
MERGE (g:GraphMeta {key: 'metadata_index'})
  ON CREATE SET g.created_at = $now
