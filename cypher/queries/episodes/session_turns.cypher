// Purpose: a session's messages in NEXT order, each with its sentence vectors and the episode it
//   already belongs to (null when not formed yet).
// Parameters: $tenant, $owner, $session_id
// Columns: id, speaker, text, timestamp, vectors (list of sentence embeddings), episode
MATCH (m:Message {tenant: $tenant, owner: $owner, session_id: $session_id})
OPTIONAL MATCH (e:Episode {tenant: $tenant})-[:DERIVED_FROM]->(m)
RETURN m.id AS id, m.speaker AS speaker, m.text AS text, m.timestamp AS timestamp,
       [(s:Sentence)-[:PART_OF]->(m) | s.embedding] AS vectors, e.id AS episode
ORDER BY m.timestamp, m.recorded_at, m.batch_index, m.id
