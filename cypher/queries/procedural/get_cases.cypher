// Purpose: cases by id, each with the current skill it supports or contradicts (if any).
// Parameters: $tenant, $ids
// Columns: c (map of the case's properties, embedding left out), skill (id or null)
UNWIND $ids AS cid
MATCH (c:Case {tenant: $tenant, id: cid})
OPTIONAL MATCH (s:Skill)-[:SUPPORTED_BY|CONTRADICTED_BY]->(c)
  WHERE s.tenant = $tenant AND s.invalidated_at IS NULL
WITH c, collect(s.id)[0] AS skill
RETURN c {.*, embedding: null} AS c, skill
