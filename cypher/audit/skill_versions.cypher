// Purpose: a skill's version history: every version of its lineage, oldest first, with its
//   validity, support counts and what superseded it, when and why, on which new evidence.
// Parameters: $tenant (string), $id (string)
// Columns: version, id, name, steps, successes, failures, valid_from, valid_to, recorded_at,
//   superseded_by, reason, sources
// Example: :param tenant => 'demo'; :param id => 'sk-...-v1'
MATCH (x:Skill {tenant: $tenant, id: $id})
MATCH (s:Skill {tenant: $tenant, lineage: x.lineage})
OPTIONAL MATCH (s)<-[r:SUPERSEDES]-(by:Skill)
RETURN s.version AS version, s.id AS id, s.name AS name, s.signature AS steps,
       s.successes AS successes, s.failures AS failures, s.valid_from AS valid_from,
       s.valid_to AS valid_to, s.recorded_at AS recorded_at, by.id AS superseded_by,
       r.reason AS reason, r.sources AS sources
ORDER BY version
