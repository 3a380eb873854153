// Purpose: a new skill version replaces the current one: (new)-[:SUPERSEDES {at, reason,
//   sources}]->(old); the old one is closed (valid_to = the new one's valid_from, invalidated_at
//   = now; an empty interval when the new one is not later: history only) and keeps its evidence
//   edges (history is never deleted).
// Parameters: $tenant, $by, $of, $now (datetime), $reason, $sources (case ids)
// Columns: by, of
MATCH (n:Skill {tenant: $tenant, id: $by}), (o:Skill {tenant: $tenant, id: $of})
MERGE (n)-[r:SUPERSEDES]->(o)
  ON CREATE SET r.at = $now, r.reason = $reason, r.sources = $sources
SET o.valid_to = CASE WHEN n.valid_from > o.valid_from THEN n.valid_from ELSE o.valid_from END,
    o.invalidated_at = $now
RETURN n.id AS by, o.id AS of
