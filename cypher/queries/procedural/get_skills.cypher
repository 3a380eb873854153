// Purpose: skills by id, each with its best supporting cases (quality, then newest first), and
//   the vectors a search explains its hits with (the skill's, and each listed case's).
// Parameters: $tenant, $ids, $cases (how many supporting cases per skill)
// Columns: s (map of the skill's properties, embedding left out), cases (list of case maps,
//   embeddings left out), vector (the skill's embedding), case_vectors (the cases' embeddings,
//   in the order of cases)
UNWIND $ids AS sid
MATCH (s:Skill {tenant: $tenant, id: sid})
CALL (s) {
  OPTIONAL MATCH (s)-[:SUPPORTED_BY]->(c:Case)
  WITH c ORDER BY c.quality DESC, c.occurred_at DESC, c.id
  LIMIT $cases
  WITH collect(c) AS found
  RETURN [x IN found | x {.*, embedding: null}] AS cases, [x IN found | x.embedding] AS vectors
}
RETURN s {.*, embedding: null} AS s, cases, s.embedding AS vector, vectors AS case_vectors
