// Purpose: the whole chain of the fact $id (every fact of its owner, subject and type, in valid
//   time order) and every SUPERSEDES edge among them, with reasons and sources.
// Parameters: $tenant, $id
// Columns: facts (list of fact maps with sources), supersessions (list of {by, of, at, reason,
//   source}); both lists are empty when $id is unknown
MATCH (x:Fact {tenant: $tenant, id: $id})
MATCH (f:Fact {tenant: $tenant, kind: x.kind, owner: x.owner, subject: x.subject, type: x.type})
WITH f ORDER BY f.valid_from, f.recorded_at
WITH collect(f) AS chain
RETURN [f IN chain | f {.id, .kind, .owner, .subject, .type, .content, .valid_from, .valid_to,
          .recorded_at, .recorded_by, .invalidated_at, .explicit, .confidence, .cardinality,
          .deleted, sources: [(f)-[:SUPPORTED_BY]->(src) | src.id]}] AS facts,
       reduce(acc = [], a IN chain | acc + [(a)-[s:SUPERSEDES]->(b) WHERE b IN chain |
          {by: a.id, of: b.id, at: s.at, reason: s.reason, source: s.source}]) AS supersessions
