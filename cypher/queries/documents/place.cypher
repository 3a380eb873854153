// Purpose: place one current document version in its owner's topic tree without building it
//   again: the other versions of its key leave their topics, it joins $topics (a category and
//   maybe a part of it) and its top-level sections join the deepest of them (its heading tree
//   hangs there); each topic touched has
//   its documents counted again and its first/last times widened (centroids and labels stay
//   until the next build). Nothing for a version placed already or no longer current.
// Parameters: $tenant, $id (the version), $topics (topic ids), $now
// Columns: placed (topics joined)
MATCH (d:Document {tenant: $tenant, id: $id})
WHERE d.current AND NOT EXISTS { (d)-[:IN_TOPIC]->(:Topic) }
CALL (d) {
  MATCH (o:Document {tenant: $tenant, owner: d.owner, key: d.key})-[r:IN_TOPIC]->(t:Topic)
  WHERE o.id <> d.id
  DELETE r
  WITH DISTINCT t
  SET t.documents = COUNT { (:Document)-[:IN_TOPIC]->(t) }, t.updated_at = $now
}
CALL (d) {
  MATCH (o:Document {tenant: $tenant, owner: d.owner, key: d.key})
  WHERE o.id <> d.id
  MATCH (s:Section {tenant: $tenant, document_id: o.id})-[r:IN_TOPIC]->(:Topic)
  DELETE r
}
UNWIND $topics AS topic
MATCH (t:Topic {tenant: $tenant, owner: d.owner, id: topic})
CREATE (d)-[:IN_TOPIC]->(t)
SET t.documents = COUNT { (:Document)-[:IN_TOPIC]->(t) }, t.updated_at = $now,
    t.first_at = CASE WHEN d.valid_from < t.first_at THEN d.valid_from ELSE t.first_at END,
    t.last_at = CASE WHEN d.valid_from > t.last_at THEN d.valid_from ELSE t.last_at END
WITH d, collect(t) AS joined
CALL (d, joined) {
  UNWIND joined AS t
  WITH t ORDER BY t.level DESC LIMIT 1
  MATCH (s:Section {tenant: $tenant, document_id: d.id})
  WHERE s.parent IS NULL
  CREATE (s)-[:IN_TOPIC]->(t)
}
RETURN size(joined) AS placed
