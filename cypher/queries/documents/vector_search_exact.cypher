// Purpose: exact vector recall over one owner's chunks valid at $t: when the filters leave the
//   approximate list short, and when Neo4j fails a SEARCH.
// Parameters: $tenant, $owner, $vector, $k, $t (datetime), $keys (list or null), $pairs (list
//   of metadata pairs every hit's document has, or null)
// Columns: id, score (cosine mapped to [0, 1] as the index maps it), best first
MATCH (c:Chunk {tenant: $tenant, owner: $owner})
WHERE c.embedding IS NOT NULL
  AND c.valid_from <= $t AND (c.valid_to IS NULL OR $t < c.valid_to)
  AND ($keys IS NULL OR c.key IN $keys)
  AND ($pairs IS NULL OR all(p IN $pairs WHERE p IN c.metadata_pairs))
WITH c.id AS id, vector.similarity.cosine(c.embedding, $vector) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
