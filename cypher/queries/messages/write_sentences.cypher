// Purpose: attach sentence-level retrieval units to newly created messages.
// Parameters: $tenant, $rows: list of {id, message_id, idx, text, embedding}
// Columns: created (count)
UNWIND $rows AS row
MATCH (m:Message {tenant: $tenant, id: row.message_id})
CREATE (s:Sentence {tenant: $tenant, id: row.id})
SET s.owner = m.owner, s.session_id = m.session_id, s.message_id = m.id, s.idx = row.idx,
    s.metadata_pairs = m.metadata_pairs,
    s.text = row.text, s.timestamp = m.timestamp, s.embedding = row.embedding,
    s.caption = CASE WHEN size(row.text) > 40 THEN left(row.text, 37) + '...' ELSE row.text END
CREATE (s)-[:PART_OF]->(m)
RETURN count(s) AS created
