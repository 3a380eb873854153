// Purpose: before forgetting a session: find it, take its locks (the Session node, as ingest's
//   relinking does, and the formation lock, as formation does) so neither runs halfway through,
//   and list its messages (at most $limit + 1: more is refused, nothing deleted) and the
//   episodes derived from them.
// Parameters: $tenant, $owner, $session_id, $now, $limit (the most messages one forgetting takes)
// Columns: messages (ids), episodes (ids of the episodes DERIVED_FROM them); no row when the
//   session is not stored
MATCH (ses:Session {tenant: $tenant, owner: $owner, session_id: $session_id})
SET ses.updated_at = $now
MERGE (l:FormationLock {tenant: $tenant, owner: $owner, session_id: $session_id})
SET l.at = $now
WITH ses
CALL () {
  MATCH (m:Message {tenant: $tenant, owner: $owner, session_id: $session_id})
  WITH m LIMIT $limit + 1
  RETURN collect(m.id) AS messages
}
CALL () {
  MATCH (e:Episode {tenant: $tenant})-[:DERIVED_FROM]->
        (:Message {tenant: $tenant, owner: $owner, session_id: $session_id})
  RETURN collect(DISTINCT e.id) AS episodes
}
RETURN messages, episodes
