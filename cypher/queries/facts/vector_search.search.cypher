// Purpose: vector recall over observations valid at $t on Neo4j 2026.01+ (Cypher 25 SEARCH):
//   tenant, owner and kind are filtered inside the index, validity at $t after it ($fetch
//   over-fetches for it). Neo4j 5: vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch, $t (datetime)
// Columns: fetched (index hits read before the validity filter), hits (list of {id, score}, best first)
CYPHER 25
MATCH (f:Fact {tenant: $tenant, owner: $owner})
  SEARCH f IN (
    VECTOR INDEX fact_vector
    FOR $vector
    WHERE f.tenant = $tenant AND f.owner = $owner AND f.kind = 'observation'
    LIMIT $fetch
  ) SCORE AS score
WITH f, score ORDER BY score DESC
WITH collect({f: f, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.f.valid_from <= $t AND (h.f.valid_to IS NULL OR $t < h.f.valid_to)
   | {id: h.f.id, score: h.score}] AS hits
