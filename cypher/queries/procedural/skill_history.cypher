// Purpose: every version of the skill $id's lineage, oldest first, and the SUPERSEDES edges among
//   them with reasons and sources.
// Parameters: $tenant, $id
// Columns: skills (list of skill maps), supersessions (list of {by, of, at, reason, sources});
//   both empty when $id is unknown
MATCH (x:Skill {tenant: $tenant, id: $id})
MATCH (s:Skill {tenant: $tenant, lineage: x.lineage})
WITH s ORDER BY s.version
WITH collect(s) AS chain
RETURN [s IN chain | s {.*, embedding: null}] AS skills,
       reduce(acc = [], a IN chain | acc + [(a)-[r:SUPERSEDES]->(b) WHERE b IN chain |
          {by: a.id, of: b.id, at: r.at, reason: r.reason, sources: r.sources}]) AS supersessions
