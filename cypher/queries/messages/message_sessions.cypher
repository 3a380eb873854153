// Purpose: the session of each of the given messages (the session prior of retrieval).
// Parameters: $tenant, $ids
// Columns: sessions (one row: a list of {id, session_id}, one per message found)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
RETURN collect({id: m.id, session_id: m.session_id}) AS sessions
