// Purpose: one skill version with all its evidence: the cases supporting it and those
//   contradicting it (newest first, at most $limit of each).
// Parameters: $tenant, $id, $limit
// Columns: s (the skill's properties, embedding left out), supporting, contradicting (case maps)
MATCH (s:Skill {tenant: $tenant, id: $id})
CALL (s) {
  OPTIONAL MATCH (s)-[:SUPPORTED_BY]->(c:Case)
  WITH c ORDER BY c.occurred_at DESC, c.id LIMIT $limit
  RETURN [x IN collect(c) | x {.*, embedding: null}] AS supporting
}
CALL (s) {
  OPTIONAL MATCH (s)-[:CONTRADICTED_BY]->(c:Case)
  WITH c ORDER BY c.occurred_at DESC, c.id LIMIT $limit
  RETURN [x IN collect(c) | x {.*, embedding: null}] AS contradicting
}
RETURN s {.*, embedding: null} AS s, supporting, contradicting
