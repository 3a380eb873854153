// Purpose: one topic with its member documents (current versions) and its subtopics.
// Parameters: $tenant, $id, $limit (members at most)
// Columns: t (topic properties without the centroid), members (list of {id, key, title}),
//   children (list of subtopic ids)
MATCH (t:Topic {tenant: $tenant, id: $id})
CALL (t) {
  OPTIONAL MATCH (d:Document)-[:IN_TOPIC]->(t)
  WITH d ORDER BY d.key LIMIT $limit
  RETURN collect(d {.id, .key, .title}) AS members
}
CALL (t) {
  OPTIONAL MATCH (c:Topic)-[:SUBTOPIC_OF]->(t)
  RETURN collect(c.id) AS children
}
RETURN t {.*, embedding: null} AS t, members, children
