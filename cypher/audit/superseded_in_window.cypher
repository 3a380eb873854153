// Purpose: everything superseded in a recorded-time window [$from, $to), with the reason, the
//   source that caused it, and the old and new content.
// Parameters: $tenant (string), $from (datetime), $to (datetime)
// Columns: at, owner, subject, type, old_content, new_content, reason, source, old_id, new_id
// Example: :param tenant => 'demo'; :param from => datetime('2020-01-01T00:00:00Z'); :param to => datetime('2100-01-01T00:00:00Z')
MATCH (new:Fact {tenant: $tenant})-[s:SUPERSEDES]->(old:Fact)
WHERE $from <= s.at < $to
RETURN s.at AS at, old.owner AS owner, old.subject AS subject, old.type AS type,
       old.content AS old_content, new.content AS new_content, s.reason AS reason,
       s.source AS source, old.id AS old_id, new.id AS new_id
ORDER BY at
