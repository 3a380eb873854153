// Purpose: exact vector recall over one owner's sentence units (used when the filter is so
//   selective that the approximate index, filtered afterwards, returns too few hits).
// Parameters: $tenant, $owner, $vector, $k, $session_id, $time_from, $time_to,
//   $metadata (nullable; a metadata filter, graphmem/messages/metadata.py)
// Columns: id (message id), score (cosine mapped to [0, 1] as the index maps it: (1 + cos) / 2,
//   which vector.similarity.cosine returns)
MATCH (s:Sentence {tenant: $tenant, owner: $owner})
WHERE ($session_id IS NULL OR s.session_id = $session_id)
  AND ($time_from IS NULL OR s.timestamp >= $time_from)
  AND ($time_to IS NULL OR s.timestamp < $time_to)
  AND ($metadata IS NULL OR all(c IN $metadata WHERE
        (c.any IS NULL OR any(p IN c.any WHERE p IN s.metadata_pairs))
        AND none(p IN c.none WHERE p IN coalesce(s.metadata_pairs, []))
        AND (c.has IS NULL
             OR c.has = any(p IN coalesce(s.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
        AND (c.low IS NULL AND c.high IS NULL
             OR any(v IN [p IN coalesce(s.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                          | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
                    WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))
WITH s.message_id AS id, vector.similarity.cosine(s.embedding, $vector) AS score
RETURN id, max(score) AS score
ORDER BY score DESC, id
LIMIT $k
