// Purpose: an owner's current skill versions (not superseded) with the cases linked to them.
// Parameters: $tenant, $owner
// Columns: id, lineage, version, signature, valid_from, name, pitfalls, cases (ids of
//   supporting and contradicting cases)
MATCH (s:Skill {tenant: $tenant, owner: $owner})
WHERE s.invalidated_at IS NULL
RETURN s.id AS id, s.lineage AS lineage, s.version AS version, s.signature AS signature,
       s.valid_from AS valid_from, s.name AS name, s.pitfalls AS pitfalls,
       [(s)-[:SUPPORTED_BY|CONTRADICTED_BY]->(c:Case) | c.id] AS cases
