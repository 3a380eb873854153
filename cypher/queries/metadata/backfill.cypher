// Purpose: set the encoded metadata pairs of messages and their metadata index tokens
//   (graphmem/messages/metadata.py), and copy the pairs to their sentence units, which the vector lists
//   filter. Every tenant: a migration.
// Parameters: $rows: list of {tenant, id, pairs (list of strings), tokens (string)}
// Columns: messages (how many were set)
UNWIND $rows AS row
MATCH (m:Message {tenant: row.tenant, id: row.id})
SET m.metadata_pairs = row.pairs, m.metadata_tokens = row.tokens
WITH m
CALL (m) {
  MATCH (s:Sentence)-[:PART_OF]->(m)
  SET s.metadata_pairs = m.metadata_pairs
}
RETURN count(m) AS messages
