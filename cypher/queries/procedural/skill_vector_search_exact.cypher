// Purpose: exact vector recall over one owner's skills in force: answers for
//   skill_vector_search.search when Neo4j fails the SEARCH (seen on 2026.08.1 for a filter
//   matching fewer vectors than its LIMIT once vectors were deleted from the index).
// Parameters: $tenant, $owner, $vector, $k, $t (datetime: skills valid then), $known
//   (datetime: as recorded by then); both null: the current versions (as skill_vector_search)
// Columns: id, score (cosine mapped to [0, 1] as the index maps it), best first
MATCH (n:Skill {tenant: $tenant, owner: $owner})
WHERE n.embedding IS NOT NULL
  AND ($known IS NULL OR n.recorded_at <= $known)
  AND CASE WHEN $t IS NULL AND $known IS NULL THEN n.invalidated_at IS NULL
           ELSE n.valid_from <= coalesce($t, $known)
             AND (n.valid_to IS NULL OR coalesce(n.invalidated_at > $known, false)
                  OR coalesce($t, $known) < n.valid_to) END
WITH n.id AS id, vector.similarity.cosine(n.embedding, $vector) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
