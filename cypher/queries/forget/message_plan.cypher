// Purpose: before forgetting a message: find it, take its session's locks (the Session node, as
//   ingest's relinking does, and the formation lock, as formation does) so neither runs halfway
//   through, and list the episodes derived from it.
// Parameters: $tenant, $id, $now
// Columns: owner, session_id, episodes (ids of the episodes DERIVED_FROM it)
MATCH (m:Message {tenant: $tenant, id: $id})
MERGE (ses:Session {tenant: $tenant, owner: m.owner, session_id: m.session_id})
SET ses.updated_at = $now
MERGE (l:FormationLock {tenant: $tenant, owner: m.owner, session_id: m.session_id})
SET l.at = $now
RETURN m.owner AS owner, m.session_id AS session_id,
       COLLECT { MATCH (e:Episode {tenant: $tenant})-[:DERIVED_FROM]->(m) RETURN e.id } AS episodes
