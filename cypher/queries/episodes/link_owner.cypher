// Purpose: chain an owner's episodes with NEXT in the order they were reported.
// Parameters: $tenant, $owner
// Columns: episodes (how many are chained)
MATCH (e:Episode {tenant: $tenant, owner: $owner})
WITH e ORDER BY e.reported_at, e.id
WITH collect(e) AS es
CALL (es) {
  UNWIND es AS a
  MATCH (a)-[r:NEXT]->(:Episode)
  DELETE r
}
CALL (es) {
  UNWIND range(0, size(es) - 2) AS i
  WITH es[i] AS a, es[i + 1] AS b
  CREATE (a)-[:NEXT]->(b)
}
RETURN size(es) AS episodes
