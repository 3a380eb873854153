// Purpose: exact vector recall over one owner's cases: answers for case_vector_search.search when
//   Neo4j fails the SEARCH (seen on 2026.08.1 for a filter matching fewer vectors than its LIMIT
//   once vectors were deleted from the index).
// Parameters: $tenant, $owner, $vector, $k
// Columns: id, score (cosine mapped to [0, 1] as the index maps it), best first
MATCH (c:Case {tenant: $tenant, owner: $owner})
WHERE c.embedding IS NOT NULL
WITH c.id AS id, vector.similarity.cosine(c.embedding, $vector) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
