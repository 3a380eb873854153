// Purpose: vector recall over skills on Neo4j 2026.01+ (Cypher 25 SEARCH): tenant and owner are
//   filtered inside the index, the versions in force after it ($fetch over-fetches for them).
//   Neo4j 5: skill_vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch, $t (datetime: skills valid then), $known
//   (datetime: as recorded by then: versions recorded by it, closed only by supersessions
//   recorded by it); both null: the current versions
// Columns: fetched (index hits read before the version filter), hits (list of {id, score}, best first)
CYPHER 25
MATCH (n:Skill {tenant: $tenant, owner: $owner})
  SEARCH n IN (
    VECTOR INDEX skill_vector
    FOR $vector
    WHERE n.tenant = $tenant AND n.owner = $owner
    LIMIT $fetch
  ) SCORE AS score
WITH n, score ORDER BY score DESC
WITH collect({n: n, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE ($known IS NULL OR h.n.recorded_at <= $known)
     AND CASE WHEN $t IS NULL AND $known IS NULL THEN h.n.invalidated_at IS NULL
              ELSE h.n.valid_from <= coalesce($t, $known)
                AND (h.n.valid_to IS NULL OR coalesce(h.n.invalidated_at > $known, false)
                     OR coalesce($t, $known) < h.n.valid_to) END
   | {id: h.n.id, score: h.score}] AS hits
