// Purpose: delete a session's turn windows that are not among the ones it should have now (a
//   late or out-of-order message changed the turns they cover).
// Parameters: $tenant, $owner, $session_id, $keep (list of window ids)
// Columns: deleted
MATCH (w:Window {tenant: $tenant, owner: $owner, session_id: $session_id})
WHERE NOT w.id IN $keep
DETACH DELETE w
RETURN count(*) AS deleted
