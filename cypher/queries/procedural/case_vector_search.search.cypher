// Purpose: vector recall over cases on Neo4j 2026.01+ (Cypher 25 SEARCH): tenant and owner are
//   filtered inside the index. Neo4j 5: case_vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch
// Columns: fetched (index hits read), hits (list of {id, score}, best first)
CYPHER 25
MATCH (c:Case {tenant: $tenant, owner: $owner})
  SEARCH c IN (
    VECTOR INDEX case_vector
    FOR $vector
    WHERE c.tenant = $tenant AND c.owner = $owner
    LIMIT $fetch
  ) SCORE AS score
WITH c, score ORDER BY score DESC
WITH collect({id: c.id, score: score}) AS hits
RETURN size(hits) AS fetched, hits
