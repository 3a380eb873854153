// Purpose: forget a whole session: its messages with their sentence units, the turn windows
//   that cover them, the given episodes derived from them, the entities only they mentioned,
//   and the Session node with its formation lock. No chain to relink: NEXT stays inside a
//   session.
// Parameters: $tenant, $owner, $session_id, $ids (the session's message ids), $episodes
// Columns: messages, sentences, windows, episodes, entities, sessions
CALL () {
  UNWIND $ids AS id
  MATCH (s:Sentence {tenant: $tenant})-[:PART_OF]->(:Message {tenant: $tenant, id: id})
  DETACH DELETE s
  RETURN count(s) AS sentences
}
CALL () {
  UNWIND $ids AS id
  MATCH (w:Window {tenant: $tenant})-[:COVERS]->(:Message {tenant: $tenant, id: id})
  WITH DISTINCT w
  DETACH DELETE w
  RETURN count(w) AS windows
}
CALL () {
  UNWIND $episodes AS eid
  MATCH (e:Episode {tenant: $tenant, id: eid})
  DETACH DELETE e
  RETURN count(e) AS episodes
}
CALL () {
  UNWIND $ids AS id
  MATCH (m:Message {tenant: $tenant, id: id})
  OPTIONAL MATCH (m)-[:MENTIONS]->(n:Entity {tenant: $tenant})
  WITH m, collect(n) AS mentioned
  DETACH DELETE m
  RETURN count(m) AS messages, collect(mentioned) AS mentions
}
CALL (mentions) {
  UNWIND mentions AS list
  UNWIND list AS n
  WITH DISTINCT n
  WHERE NOT EXISTS { MATCH (:Message {tenant: $tenant})-[:MENTIONS]->(n) }
  DETACH DELETE n
  RETURN count(n) AS entities
}
CALL () {
  MATCH (x:Session|FormationLock {tenant: $tenant, owner: $owner, session_id: $session_id})
  WITH x, x:Session AS session
  DETACH DELETE x
  RETURN sum(CASE WHEN session THEN 1 ELSE 0 END) AS sessions
}
RETURN messages, sentences, windows, episodes, entities, sessions
