// Purpose: skills by id, each with its best supporting cases (quality, then newest first).
// Parameters: $tenant, $ids, $cases (how many supporting cases per skill)
// Columns: s (map of the skill's properties, embedding left out), cases (list of case maps)
UNWIND $ids AS sid
MATCH (s:Skill {tenant: $tenant, id: sid})
CALL (s) {
  OPTIONAL MATCH (s)-[:SUPPORTED_BY]->(c:Case)
  WITH c ORDER BY c.quality DESC, c.occurred_at DESC, c.id
  LIMIT $cases
  RETURN [x IN collect(c) | x {.*, embedding: null}] AS cases
}
RETURN s {.*, embedding: null} AS s, cases
