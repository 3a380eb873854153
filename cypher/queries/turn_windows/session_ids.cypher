// Purpose: the ids of the turn windows a session has now (formation compares them with the
//   windows the session should have, and embeds only the missing ones).
// Parameters: $tenant, $owner, $session_id
// Columns: id
MATCH (w:Window {tenant: $tenant, owner: $owner, session_id: $session_id})
RETURN w.id AS id
