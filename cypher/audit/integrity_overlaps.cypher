// Purpose: integrity check (must return no rows): two facts of one single-valued chain whose
//   non-empty validity intervals overlap.
// Parameters: $tenant (string)
// Columns: owner, subject, type, a, a_from, a_to, b, b_from, b_to
// Example: :param tenant => 'demo'
MATCH (a:Fact {tenant: $tenant, cardinality: 'single'})
MATCH (b:Fact {tenant: $tenant, kind: a.kind, owner: a.owner, subject: a.subject, type: a.type})
WHERE a.id < b.id
  AND (a.valid_to IS NULL OR a.valid_from < a.valid_to)
  AND (b.valid_to IS NULL OR b.valid_from < b.valid_to)
  AND (b.valid_to IS NULL OR a.valid_from < b.valid_to)
  AND (a.valid_to IS NULL OR b.valid_from < a.valid_to)
RETURN a.owner AS owner, a.subject AS subject, a.type AS type, a.id AS a,
       a.valid_from AS a_from, a.valid_to AS a_to, b.id AS b, b.valid_from AS b_from,
       b.valid_to AS b_to
