// Purpose: a session's messages in NEXT order, each with the episode it already belongs to (null
//   when not formed yet). Sentence vectors are read separately (turn_vectors), only for the
//   messages formation looks at, so a long session is not re-read in full on every run.
// Parameters: $tenant, $owner, $session_id
// Columns: id, speaker, text, timestamp, episode
MATCH (m:Message {tenant: $tenant, owner: $owner, session_id: $session_id})
OPTIONAL MATCH (e:Episode {tenant: $tenant})-[:DERIVED_FROM]->(m)
RETURN m.id AS id, m.speaker AS speaker, m.text AS text, m.timestamp AS timestamp,
       e.id AS episode
ORDER BY m.timestamp, m.recorded_at, m.batch_index, m.id
