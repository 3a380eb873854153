// Purpose: exact vector recall over one owner's episodes: answers for vector_search.search when
//   Neo4j fails the SEARCH (seen on 2026.08.1 for a filter matching fewer vectors than its LIMIT
//   once vectors were deleted from the index).
// Parameters: $tenant, $owner, $vector, $k,
//   $as_of (nullable: only episodes whose turns were all sent by then, reported_until <=
//   $as_of)
// Columns: id, score (cosine mapped to [0, 1] as the index maps it), best first
MATCH (e:Episode {tenant: $tenant, owner: $owner})
WHERE e.embedding IS NOT NULL AND ($as_of IS NULL OR e.reported_until <= $as_of)
WITH e.id AS id, vector.similarity.cosine(e.embedding, $vector) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
