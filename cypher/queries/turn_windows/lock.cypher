// Purpose: before a session's turn windows are replaced: take the session's formation lock (not
//   the Session node: ingest must not wait on formation) and count its messages now, so a plan
//   made from an older read (a message arrived meanwhile; its own job rebuilds) is not written.
//   A session forgotten meanwhile has no messages: its lock is not made again.
// Parameters: $tenant, $owner, $session_id, $now
// Columns: messages (how many messages the session has; 0 when it is gone)
OPTIONAL MATCH (ses:Session {tenant: $tenant, owner: $owner, session_id: $session_id})
CALL (ses) {
  WITH ses WHERE ses IS NOT NULL
  MERGE (l:FormationLock {tenant: $tenant, owner: $owner, session_id: $session_id})
  SET l.windows_at = $now
}
RETURN COUNT { MATCH (m:Message {tenant: $tenant, owner: $owner, session_id: $session_id}) }
  AS messages
