// Purpose: facts of a tenant by id, with their sources (any order; callers order them).
// Parameters: $tenant, $ids
// Columns: f (fact properties without vectors), sources (ids)
UNWIND $ids AS id
MATCH (f:Fact {tenant: $tenant, id: id})
RETURN f {.id, .kind, .owner, .subject, .type, .content, .valid_from, .valid_to, .recorded_at,
          .invalidated_at, .explicit, .confidence, .cardinality, .deleted} AS f,
       [(f)-[:SUPPORTED_BY]->(src) | src.id] AS sources
