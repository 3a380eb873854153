// Purpose: exact vector recall over one owner's turn windows of one size (used when the filter is
//   so selective that the approximate index, filtered afterwards, returns too few hits).
// Parameters: $tenant, $owner, $size, $vector, $k, $session_id, $time_from, $time_to (nullable)
// Columns: id, score (cosine mapped to [0, 1] as the index maps it, which
//   vector.similarity.cosine does), messages (covered ids, in order)
MATCH (w:Window {tenant: $tenant, owner: $owner})
WHERE w.size = $size AND w.embedding IS NOT NULL
  AND ($session_id IS NULL OR w.session_id = $session_id)
  AND ($time_from IS NULL OR w.first_at >= $time_from)
  AND ($time_to IS NULL OR w.last_at < $time_to)
WITH w, vector.similarity.cosine(w.embedding, $vector) AS score
RETURN w.id AS id, score, w.message_ids AS messages
ORDER BY score DESC, id
LIMIT $k
