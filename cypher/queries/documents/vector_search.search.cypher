// Purpose: vector recall over one owner's chunks on Neo4j 2026.01+ (Cypher 25 SEARCH): tenant
//   and owner filtered inside the index; validity at $t, document keys and metadata after it
//   ($fetch over-fetches for them). Neo4j 5: vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch, $t (datetime), $keys (list or null),
//   $pairs (list of metadata pairs every hit's document has, or null)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CYPHER 25
MATCH (c:Chunk {tenant: $tenant, owner: $owner})
  SEARCH c IN (
    VECTOR INDEX chunk_vector
    FOR $vector
    WHERE c.tenant = $tenant AND c.owner = $owner
    LIMIT $fetch
  ) SCORE AS score
WITH c, score ORDER BY score DESC
WITH collect({c: c, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.c.valid_from <= $t AND (h.c.valid_to IS NULL OR $t < h.c.valid_to)
     AND ($keys IS NULL OR h.c.key IN $keys)
     AND ($pairs IS NULL OR all(p IN $pairs WHERE p IN h.c.metadata_pairs))
   | {id: h.c.id, score: h.score}] AS hits
