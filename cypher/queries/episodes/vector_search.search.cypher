// Purpose: vector recall over episodes on Neo4j 2026.01+ (Cypher 25 SEARCH): tenant and owner
//   are filtered inside the index. Neo4j 5: vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch
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
WITH collect({id: e.id, score: score}) AS hits
RETURN size(hits) AS fetched, hits
