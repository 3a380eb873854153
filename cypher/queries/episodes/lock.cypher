// Purpose: take the formation lock of a session (not the Session node: ingest must not wait on
//   formation) and report messages that another formation assigned meanwhile.
//   A session forgotten meanwhile: no row, no lock made again (its episodes are not written:
//   their messages are gone).
// Parameters: $tenant, $owner, $session_id, $now, $assign (list of {message_id, episode})
// Columns: taken (ids of messages already derived into another episode)
MATCH (:Session {tenant: $tenant, owner: $owner, session_id: $session_id})
MERGE (l:FormationLock {tenant: $tenant, owner: $owner, session_id: $session_id})
SET l.at = $now
WITH l
CALL (l) {
  UNWIND $assign AS a
  MATCH (e:Episode {tenant: $tenant})-[:DERIVED_FROM]->(m:Message {tenant: $tenant, id: a.message_id})
  WHERE e.id <> a.episode
  RETURN collect(m.id) AS taken
}
RETURN taken
