// Purpose: vector recall over episodes on Neo4j 2026.01+ (Cypher 25 SEARCH): tenant and owner
//   are filtered inside the index, the time after it. Neo4j 5: vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch,
//   $as_of (nullable: only episodes whose turns were all sent by then, reported_until <=
//   $as_of)
// Columns: fetched (index hits read), hits (list of {id, score}, best first)
CYPHER 25
MATCH (e:Episode {tenant: $tenant, owner: $owner})
  SEARCH e IN (
    VECTOR INDEX episode_vector
    FOR $vector
    WHERE e.tenant = $tenant AND e.owner = $owner
    LIMIT $fetch
  ) SCORE AS score
WITH e, score ORDER BY score DESC
WITH collect({e: e, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE $as_of IS NULL OR h.e.reported_until <= $as_of
   | {id: h.e.id, score: h.score}] AS hits
