// Purpose: vector recall over turn windows of one size on Neo4j 2026.01+ (Cypher 25 SEARCH):
//   tenant, owner and size are filtered inside the index; session and time after it ($fetch
//   over-fetches for them); with a time filter, only windows wholly inside it.
//   Neo4j 5: vector_search.cypher.
// Parameters: $tenant, $owner, $size, $vector, $fetch, $session_id, $time_from, $time_to (nullable)
// Columns: fetched (index hits read before the session and time filters),
//   hits (list of {id, score, messages: the covered message ids in order}, best first)
CYPHER 25
MATCH (w:Window {tenant: $tenant, owner: $owner})
  SEARCH w IN (
    VECTOR INDEX window_vector
    FOR $vector
    WHERE w.tenant = $tenant AND w.owner = $owner AND w.size = $size
    LIMIT $fetch
  ) SCORE AS score
WITH w, score ORDER BY score DESC
WITH collect({w: w, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE ($session_id IS NULL OR h.w.session_id = $session_id)
     AND ($time_from IS NULL OR h.w.first_at >= $time_from)
     AND ($time_to IS NULL OR h.w.last_at < $time_to)
   | {id: h.w.id, score: h.score, messages: h.w.message_ids}] AS hits
