// Purpose: replace an owner's topic tree in one transaction: topics no longer in it are deleted,
//   the others written (a topic whose members did not change keeps its id: it is the same node,
//   its properties refreshed, built_at the time of this build), SUBTOPIC_OF links to parents,
//   IN_TOPIC links from the member documents, and from their top-level sections to the deepest
//   topic each document is in (its heading tree hangs there). The keyphrase label is the label,
//   unless an LLM labelled the kept topic (label_model): its label and summary stay (the same id
//   means the same members), the keyphrases kept beside them. search_text (the label, the
//   keyphrases and the summary) and scope feed topic_fulltext.
// Parameters: $tenant, $owner, $scope (the owner's fulltext scope), $now, $topics (list of {id,
//   level, parent, label, members, documents, centroid, first_at, last_at})
// Columns: topics (how many the owner has now), kept (how many kept their node)
OPTIONAL MATCH (old:Topic {tenant: $tenant, owner: $owner})
WITH collect(old) AS olds, [t IN $topics | t.id] AS ids
WITH ids, [o IN olds WHERE NOT o.id IN ids] AS gone, size([o IN olds WHERE o.id IN ids]) AS kept
FOREACH (o IN gone | DETACH DELETE o)
WITH kept
CALL () {
  MATCH (d:Document {tenant: $tenant, owner: $owner})-[r:IN_TOPIC]->()
  DELETE r
}
CALL () {
  MATCH (s:Section {tenant: $tenant, owner: $owner})-[r:IN_TOPIC]->()
  DELETE r
}
CALL () {
  UNWIND $topics AS row
  MERGE (t:Topic {tenant: $tenant, id: row.id})
  ON CREATE SET t.created_at = $now
  SET t.owner = $owner, t.kind = 'category', t.level = row.level, t.parent = row.parent,
      t.keyphrases = row.label,
      t.label = CASE WHEN t.label_model IS NULL THEN row.label ELSE t.label END,
      t.documents = row.documents, t.scope = $scope, t.embedding = row.centroid,
      t.first_at = row.first_at, t.last_at = row.last_at, t.updated_at = $now, t.built_at = $now
  SET t.search_text = CASE WHEN t.label_model IS NULL THEN row.label
                           ELSE t.label + '\n' + row.label + '\n' + coalesce(t.summary, '') END
  WITH t, row
  OPTIONAL MATCH (t)-[p:SUBTOPIC_OF]->()
  DELETE p
  WITH t, row
  UNWIND row.members AS member
  MATCH (d:Document {tenant: $tenant, id: member})
  CREATE (d)-[:IN_TOPIC]->(t)
}
CALL () {
  UNWIND $topics AS row
  WITH row WHERE row.parent IS NOT NULL
  MATCH (t:Topic {tenant: $tenant, id: row.id})
  MATCH (p:Topic {tenant: $tenant, id: row.parent})
  CREATE (t)-[:SUBTOPIC_OF]->(p)
}
CALL () {
  UNWIND $topics AS row
  WITH row WHERE NOT row.id IN [x IN $topics WHERE x.parent IS NOT NULL | x.parent]
  UNWIND row.members AS member
  MATCH (s:Section {tenant: $tenant, document_id: member})
  WHERE s.parent IS NULL
  MATCH (t:Topic {tenant: $tenant, id: row.id})
  CREATE (s)-[:IN_TOPIC]->(t)
}
RETURN size($topics) AS topics, kept
