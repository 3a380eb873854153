// Purpose: exact vector recall over one owner's observations valid at $t: answers for
//   vector_search.search when Neo4j fails the SEARCH (seen on 2026.08.1 for a filter matching
//   fewer vectors than its LIMIT once vectors were deleted from the index).
// Parameters: $tenant, $owner, $vector, $k, $t (datetime)
// Columns: id, score (cosine mapped to [0, 1] as the index maps it), best first
MATCH (f:Fact {tenant: $tenant, owner: $owner})
WHERE f.kind = 'observation' AND f.embedding IS NOT NULL
  AND f.valid_from <= $t AND (f.valid_to IS NULL OR $t < f.valid_to)
WITH f.id AS id, vector.similarity.cosine(f.embedding, $vector) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
