// Purpose: episodes of a session whose facts have not been extracted yet (LLM path), with their
//   messages in order: extraction that failed is retried on the next formation run.
// Parameters: $tenant, $owner, $session_id
// Columns: id, messages (list of {id, speaker, text, timestamp})
MATCH (e:Episode {tenant: $tenant, owner: $owner, session_id: $session_id})
WHERE e.extracted_at IS NULL
CALL (e) {
  MATCH (e)-[r:DERIVED_FROM]->(m:Message)
  WITH m ORDER BY r.idx
  RETURN collect(m {.id, .speaker, .text, .timestamp}) AS messages
}
RETURN e.id AS id, messages
ORDER BY e.reported_at
