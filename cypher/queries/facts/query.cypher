// Purpose: facts of an owner as the system knows them. Valid time: as_of t keeps
//   valid_from <= t < valid_to (open ends unbounded). Recorded time: known_at T keeps facts
//   recorded by T, with the valid_to believed at T (the last SUPERSEDES closing recorded by T).
//   Undated: what is true now, as known now. include_history: every fact of the chain.
// Parameters: $tenant, $kind, $owner, $subject, $type (nullable filters), $as_of, $known_at
//   (nullable datetimes), $now (datetime), $include_history (bool)
// Columns: f (fact properties), valid_to (as believed at known_at), sources (ids)
MATCH (f:Fact {tenant: $tenant, kind: $kind, owner: $owner})
WHERE ($subject IS NULL OR f.subject = $subject) AND ($type IS NULL OR f.type = $type)
  AND ($known_at IS NULL OR f.recorded_at <= $known_at)
CALL (f) {
  OPTIONAL MATCH (f)<-[s:SUPERSEDES]-()
  WHERE $known_at IS NULL OR s.at <= $known_at
  RETURN s ORDER BY s.at DESC LIMIT 1
}
WITH f, CASE
    WHEN $known_at IS NULL THEN f.valid_to
    WHEN s IS NULL THEN f.valid_to_original
    ELSE s.closed_valid_to END AS vt,
  coalesce($as_of, $known_at, $now) AS t
WHERE $include_history
   OR (f.valid_from <= t AND (vt IS NULL OR t < vt) AND NOT coalesce(f.deleted, false))
RETURN f {.id, .kind, .owner, .subject, .type, .content, .valid_from, .recorded_at,
          .recorded_by, .invalidated_at, .explicit, .confidence, .cardinality, .deleted} AS f,
       vt AS valid_to,
       [(f)-[:SUPPORTED_BY]->(src) | src.id] AS sources
ORDER BY f.subject, f.type, f.valid_from, f.recorded_at
