// Purpose: what was true at time $t (valid time), as the store knows it now:
//   valid_from <= t < valid_to, open ends unbounded; profile deletions are not facts.
// Parameters: $tenant (string), $owner (string), $t (datetime)
// Columns: kind, subject, type, content, valid_from, valid_to, id
// Example: :param tenant => 'demo'; :param owner => 'alice'; :param t => datetime('2026-03-15T12:00:00Z')
MATCH (f:Fact {tenant: $tenant, owner: $owner})
WHERE f.valid_from <= $t AND (f.valid_to IS NULL OR $t < f.valid_to)
  AND NOT coalesce(f.deleted, false)
RETURN f.kind AS kind, f.subject AS subject, f.type AS type, f.content AS content,
       f.valid_from AS valid_from, f.valid_to AS valid_to, f.id AS id
ORDER BY subject, type, valid_from
