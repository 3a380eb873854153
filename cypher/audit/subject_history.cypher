// Purpose: the history of a subject: every fact about it (all types), in valid-time order, with
//   what superseded it, when and why.
// Parameters: $tenant (string), $owner (string), $subject (string)
// Columns: type, content, valid_from, valid_to, recorded_at, invalidated_at, superseded_by,
//   reason, superseded_at, id
// Example: :param tenant => 'demo'; :param owner => 'alice'; :param subject => 'release'
MATCH (f:Fact {tenant: $tenant, owner: $owner, subject: $subject})
OPTIONAL MATCH (f)<-[s:SUPERSEDES]-(by:Fact)
RETURN f.type AS type, f.content AS content, f.valid_from AS valid_from, f.valid_to AS valid_to,
       f.recorded_at AS recorded_at, f.invalidated_at AS invalidated_at,
       by.id AS superseded_by, s.reason AS reason, s.at AS superseded_at, f.id AS id
ORDER BY type, valid_from, recorded_at
