// Purpose: integrity: every skill (every version) rests on at least one successful supporting
//   case. Must return no rows.
// Parameters: $tenant (string)
// Columns: id, owner, version, name
// Example: :param tenant => 'demo'
MATCH (s:Skill {tenant: $tenant})
WHERE NOT EXISTS { (s)-[:SUPPORTED_BY]->(c:Case) WHERE c.outcome = 'success' }
RETURN s.id AS id, s.owner AS owner, s.version AS version, s.name AS name
ORDER BY id
