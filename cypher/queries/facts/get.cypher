// Purpose: facts of a tenant by id, with their sources (any order; callers order them).
// Parameters: $tenant, $ids
// Columns: facts (one row: a list of {f, sources} per fact found: f the fact's properties without
//   vectors, its times as microseconds since the epoch, valid_from_us, valid_to_us,
//   recorded_at_us, invalidated_at_us: the driver reads a datetime ~75x slower than an integer;
//   sources its sources' ids; one row, not one per fact: the driver reads a record ~40 us slower
//   than a list item)
UNWIND $ids AS id
MATCH (f:Fact {tenant: $tenant, id: id})
RETURN collect({
  f: f {.id, .kind, .owner, .subject, .type, .content, .explicit, .confidence, .cardinality,
        .deleted, .recorded_by,
        valid_from_us: f.valid_from.epochSeconds * 1000000 + f.valid_from.microsecond,
        valid_to_us: f.valid_to.epochSeconds * 1000000 + f.valid_to.microsecond,
        recorded_at_us: f.recorded_at.epochSeconds * 1000000 + f.recorded_at.microsecond,
        invalidated_at_us:
          f.invalidated_at.epochSeconds * 1000000 + f.invalidated_at.microsecond},
  sources: [(f)-[:SUPPORTED_BY]->(src) | src.id]}) AS facts
