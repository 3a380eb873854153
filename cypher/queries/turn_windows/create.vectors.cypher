// Purpose: create.cypher where the connection carries vector values (Bolt 6, Neo4j 2025.10+):
//   each row's embedding arrives as one vector value and is stored as the same list of floats
//   (`toFloatList`, Cypher 25).
// Parameters: $tenant, $owner, $session_id, $now, $scope (the owner's fulltext scope), $rows:
//   list of {id, size, start_id, message_ids, first_at, last_at, search_text, embedding (a
//   vector value), caption}
// Columns: created
CYPHER 25
UNWIND $rows AS row
MERGE (w:Window {tenant: $tenant, id: row.id})
  ON CREATE SET w.owner = $owner, w.session_id = $session_id, w.size = row.size,
    w.start_id = row.start_id, w.message_ids = row.message_ids, w.first_at = row.first_at,
    w.last_at = row.last_at, w.search_text = row.search_text, w.scope = $scope,
    w.embedding = toFloatList(row.embedding),
    w.caption = row.caption, w.built_at = $now
WITH w, row
CALL (w, row) {
  UNWIND range(0, size(row.message_ids) - 1) AS i
  MATCH (m:Message {tenant: $tenant, id: row.message_ids[i]})
  MERGE (w)-[c:COVERS]->(m)
  SET c.position = i
}
RETURN count(w) AS created
