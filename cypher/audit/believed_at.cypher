// Purpose: what the system believed at recorded time $known_at about valid time $t: facts recorded
//   by then, each with the valid_to it had then (the last SUPERSEDES closing recorded by then).
// Parameters: $tenant (string), $owner (string), $known_at (datetime), $t (datetime)
// Columns: kind, subject, type, content, valid_from, valid_to_then, valid_to_now, recorded_at, id
// Example: :param tenant => 'demo'; :param owner => 'alice'; :param known_at => datetime(); :param t => datetime()
MATCH (f:Fact {tenant: $tenant, owner: $owner})
WHERE f.recorded_at <= $known_at
CALL (f) {
  OPTIONAL MATCH (f)<-[s:SUPERSEDES]-()
  WHERE s.at <= $known_at
  RETURN s ORDER BY s.at DESC LIMIT 1
}
WITH f, CASE WHEN s IS NULL THEN f.valid_to_original ELSE s.closed_valid_to END AS vt
WHERE f.valid_from <= $t AND (vt IS NULL OR $t < vt) AND NOT coalesce(f.deleted, false)
RETURN f.kind AS kind, f.subject AS subject, f.type AS type, f.content AS content,
       f.valid_from AS valid_from, vt AS valid_to_then, f.valid_to AS valid_to_now,
       f.recorded_at AS recorded_at, f.id AS id
ORDER BY subject, type, valid_from
