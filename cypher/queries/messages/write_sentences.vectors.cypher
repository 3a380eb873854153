// Purpose: write_sentences.cypher where the connection carries vector values (Bolt 6, Neo4j
//   2025.10+): each row's embedding arrives as one vector value (a few bytes to pack and read,
//   not a list of numbers) and is stored as the same list of floats (`toFloatList`, Cypher 25).
// Parameters: $tenant, $rows: list of {id, message_id, idx, text, embedding (a vector value)}
// Columns: created (count)
CYPHER 25
UNWIND $rows AS row
MATCH (m:Message {tenant: $tenant, id: row.message_id})
CREATE (s:Sentence {tenant: $tenant, id: row.id})
SET s.owner = m.owner, s.session_id = m.session_id, s.message_id = m.id, s.idx = row.idx,
    s.metadata_pairs = m.metadata_pairs,
    s.text = row.text, s.timestamp = m.timestamp, s.embedding = toFloatList(row.embedding),
    s.caption = CASE WHEN size(row.text) > 40 THEN left(row.text, 37) + '...' ELSE row.text END
CREATE (s)-[:PART_OF]->(m)
RETURN count(s) AS created
