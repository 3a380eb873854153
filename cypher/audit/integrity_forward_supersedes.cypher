// Purpose: integrity check (must return no rows): a SUPERSEDES edge pointing forward in time (the
//   superseding fact became valid before the fact it supersedes).
// Parameters: $tenant (string)
// Columns: new_id, new_from, old_id, old_from, reason
// Example: :param tenant => 'demo'
MATCH (new:Fact {tenant: $tenant})-[s:SUPERSEDES]->(old:Fact)
WHERE new.valid_from < old.valid_from
RETURN new.id AS new_id, new.valid_from AS new_from, old.id AS old_id,
       old.valid_from AS old_from, s.reason AS reason
