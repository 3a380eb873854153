// Purpose: exact vector recall over one owner's sentence units (used when the filter is so
//   selective that the approximate index, filtered afterwards, returns too few hits).
// Parameters: $tenant, $owner, $vector, $k, $session_id, $time_from, $time_to,
//   $metadata (nullable; a metadata filter, graphmem/metadata.py)
// Columns: id (message id), score (cosine mapped to [0, 1] as the index maps it: (1 + cos) / 2,
//   which vector.similarity.cosine returns)
MATCH (s:Sentence {tenant: $tenant, owner: $owner})
WHERE ($session_id IS NULL OR s.session_id = $session_id)
  AND ($time_from IS NULL OR s.timestamp >= $time_from)
  AND ($time_to IS NULL OR s.timestamp < $time_to)
  AND ($metadata IS NULL OR all(accepted IN $metadata
       WHERE any(p IN accepted WHERE p IN s.metadata_pairs)))
WITH s.message_id AS id, vector.similarity.cosine(s.embedding, $vector) AS score
RETURN id, max(score) AS score
ORDER BY score DESC, id
LIMIT $k
