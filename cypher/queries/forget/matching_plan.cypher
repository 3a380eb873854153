// Purpose: before forgetting the messages of an owner that a filter chooses: find them (at most
//   $limit + 1: more is refused, nothing deleted), take the locks of their sessions (the Session
//   node, as ingest's relinking does, and the formation lock, as formation does, as
//   message_plan.cypher takes them for one message), and list the episodes derived from them.
// Parameters: $tenant, $owner, $now, $limit, $session_id, $time_from, $time_to, $metadata
//   (nullable filters; $metadata as graphmem/messages/metadata.py encodes it)
// Columns: messages (ids, in event time), sessions (the session ids they belong to), episodes
//   (ids of the episodes DERIVED_FROM them); one row, empty lists when none match
CALL () {
  MATCH (m:Message {tenant: $tenant, owner: $owner})
  WHERE ($session_id IS NULL OR m.session_id = $session_id)
    AND ($time_from IS NULL OR m.timestamp >= $time_from)
    AND ($time_to IS NULL OR m.timestamp < $time_to)
    AND ($metadata IS NULL OR all(c IN $metadata WHERE
          (c.any IS NULL OR any(p IN c.any WHERE p IN m.metadata_pairs))
          AND none(p IN c.none WHERE p IN coalesce(m.metadata_pairs, []))
          AND (c.has IS NULL
               OR c.has = any(p IN coalesce(m.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
          AND (c.low IS NULL AND c.high IS NULL
               OR any(v IN [p IN coalesce(m.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                            | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
                      WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))
  WITH m ORDER BY m.timestamp, m.id LIMIT $limit + 1
  RETURN collect(m) AS found
}
CALL (found) {
  UNWIND found AS m
  WITH DISTINCT m.session_id AS sid
  MERGE (ses:Session {tenant: $tenant, owner: $owner, session_id: sid})
  SET ses.updated_at = $now
  MERGE (l:FormationLock {tenant: $tenant, owner: $owner, session_id: sid})
  SET l.at = $now
  RETURN collect(sid) AS sessions
}
CALL (found) {
  UNWIND found AS m
  MATCH (e:Episode {tenant: $tenant})-[:DERIVED_FROM]->(m)
  RETURN collect(DISTINCT e.id) AS episodes
}
RETURN [m IN found | m.id] AS messages, sessions, episodes
