// Purpose: an owner's messages (of one session, or of any when $session_id is null) whose word
//   pieces are missing or come from another sparse model: what formation encodes next.
// Parameters: $tenant, $owner, $session_id (nullable), $model, $limit
// Columns: id, text (speaker: text, as searched)
MATCH (m:Message {tenant: $tenant, owner: $owner})
WHERE ($session_id IS NULL OR m.session_id = $session_id)
  AND (m.sparse_model IS NULL OR m.sparse_model <> $model)
RETURN m.id AS id, m.search_text AS text
LIMIT $limit
