// Purpose: keep NEXT chains in event-time order after new messages landed in some sessions.
//   Only the affected stretch is relinked: from the last message before the earliest new one to the
//   first message after the latest new one. Late and out-of-order arrivals land in place.
//   The Session node is written first, which takes its lock: concurrent batches of one session
//   relink one after the other.
// Parameters: $tenant, $batch, $now, $sessions: list of {owner, session_id, min_ts, max_ts}
// Columns: owner, session_id, linked (messages in the relinked stretch)
UNWIND $sessions AS s
MERGE (ses:Session {tenant: $tenant, owner: s.owner, session_id: s.session_id})
  ON CREATE SET ses.created_at = $now, ses.caption = s.owner + ' / ' + s.session_id
SET ses.last_batch = $batch, ses.updated_at = $now
WITH ses, s
OPTIONAL MATCH (p:Message {tenant: $tenant, owner: s.owner, session_id: s.session_id})
  WHERE p.timestamp < s.min_ts
WITH ses, s, max(p.timestamp) AS lo
OPTIONAL MATCH (n:Message {tenant: $tenant, owner: s.owner, session_id: s.session_id})
  WHERE n.timestamp > s.max_ts
WITH ses, s, coalesce(lo, s.min_ts) AS lo, coalesce(min(n.timestamp), s.max_ts) AS hi
MATCH (m:Message {tenant: $tenant, owner: s.owner, session_id: s.session_id})
  WHERE lo <= m.timestamp <= hi
WITH ses, s, m ORDER BY m.timestamp, m.recorded_at, m.batch_index, m.id
WITH ses, s, collect(m) AS ms
CALL (ms) {
  UNWIND ms AS a
  MATCH (a)-[r:NEXT]->(b)
  WHERE b IN ms
  DELETE r
}
CALL (ms) {
  UNWIND range(0, size(ms) - 2) AS i
  WITH ms[i] AS a, ms[i + 1] AS b
  CREATE (a)-[:NEXT]->(b)
}
CALL (ses, s) {
  MATCH (x:Message {tenant: $tenant, owner: s.owner, session_id: s.session_id})
  WITH ses, min(x.timestamp) AS first, max(x.timestamp) AS last, count(x) AS total
  SET ses.first_at = first, ses.last_at = last, ses.message_count = total
}
RETURN s.owner AS owner, s.session_id AS session_id, size(ms) AS linked
