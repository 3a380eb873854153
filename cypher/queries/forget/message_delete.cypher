// Purpose: forget one message: its sentence units, the turn windows that cover it and the given
//   episodes derived from it (formation builds them again from the session's other messages),
//   the entities only it mentioned, and the message itself, with the session's NEXT chain
//   relinked around it. The session's
//   figures are counted again; a session left without messages goes.
// Parameters: $tenant, $id, $episodes (ids of the episodes derived from it)
// Columns: sentences, windows, episodes, entities, sessions (1 when its session went), remaining
//   (messages left in its session), session_id (its session)
MATCH (m:Message {tenant: $tenant, id: $id})
WITH m, m.owner AS owner, m.session_id AS session_id
CALL (m) {
  OPTIONAL MATCH (s:Sentence {tenant: $tenant})-[:PART_OF]->(m)
  DETACH DELETE s
  RETURN count(s) AS sentences
}
CALL (m) {
  OPTIONAL MATCH (w:Window {tenant: $tenant})-[:COVERS]->(m)
  DETACH DELETE w
  RETURN count(w) AS windows
}
CALL () {
  UNWIND $episodes AS eid
  MATCH (e:Episode {tenant: $tenant, id: eid})
  DETACH DELETE e
  RETURN count(e) AS episodes
}
CALL (m) {
  OPTIONAL MATCH (a:Message {tenant: $tenant})-[:NEXT]->(m)
  OPTIONAL MATCH (m)-[:NEXT]->(b:Message {tenant: $tenant})
  FOREACH (_ IN CASE WHEN a IS NOT NULL AND b IS NOT NULL THEN [1] ELSE [] END |
    CREATE (a)-[:NEXT]->(b))
}
WITH m, owner, session_id, sentences, windows, episodes,
     COLLECT { MATCH (m)-[:MENTIONS]->(n:Entity {tenant: $tenant}) RETURN n } AS mentioned
DETACH DELETE m
WITH owner, session_id, sentences, windows, episodes, mentioned
CALL (mentioned) {
  UNWIND mentioned AS n
  WITH n WHERE NOT EXISTS { MATCH (:Message {tenant: $tenant})-[:MENTIONS]->(n) }
  DETACH DELETE n
  RETURN count(*) AS entities
}
WITH owner, session_id, sentences, windows, episodes, entities
MATCH (ses:Session {tenant: $tenant, owner: owner, session_id: session_id})
CALL (ses, owner, session_id) {
  OPTIONAL MATCH (x:Message {tenant: $tenant, owner: owner, session_id: session_id})
  WITH ses, min(x.timestamp) AS first, max(x.timestamp) AS last, count(x) AS total
  SET ses.first_at = first, ses.last_at = last, ses.message_count = total
  RETURN total AS remaining
}
CALL (ses, remaining) {
  WITH ses WHERE remaining = 0
  DETACH DELETE ses
  RETURN count(*) AS sessions
}
RETURN sentences, windows, episodes, entities, sessions, remaining, session_id
