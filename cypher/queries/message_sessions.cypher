// Purpose: the session of each of the given messages (the session prior of retrieval).
// Parameters: $tenant, $ids
// Columns: id, session_id
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
RETURN m.id AS id, m.session_id AS session_id
