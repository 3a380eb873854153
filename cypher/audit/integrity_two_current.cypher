// Purpose: integrity check (must return no rows): two facts valid now in one single-valued chain.
// Parameters: $tenant (string)
// Columns: kind, owner, subject, type, ids
// Example: :param tenant => 'demo'
MATCH (f:Fact {tenant: $tenant, cardinality: 'single'})
WHERE f.valid_from <= datetime() AND (f.valid_to IS NULL OR datetime() < f.valid_to)
WITH f.kind AS kind, f.owner AS owner, f.subject AS subject, f.type AS type, collect(f.id) AS ids
WHERE size(ids) > 1
RETURN kind, owner, subject, type, ids
