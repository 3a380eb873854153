// Purpose: integrity check (must return no rows): an inferred fact (explicit = false) without any
//   source; an inference must say what it was inferred from.
// Parameters: $tenant (string)
// Columns: id, owner, subject, type, content
// Example: :param tenant => 'demo'
MATCH (f:Fact {tenant: $tenant})
WHERE f.explicit = false AND NOT (f)-[:SUPPORTED_BY]->()
RETURN f.id AS id, f.owner AS owner, f.subject AS subject, f.type AS type, f.content AS content
