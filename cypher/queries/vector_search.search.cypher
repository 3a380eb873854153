// Purpose: vector recall over sentence units on Neo4j 2026.01+ (Cypher 25 SEARCH): tenant and
//   owner are filtered inside the index; session and time after it ($fetch over-fetches, since a
//   message has several sentences and those filters are optional). Neo4j 5: vector_search.cypher.
// Parameters: $tenant, $owner, $vector, $fetch, $session_id, $time_from, $time_to,
//   $metadata (nullable; a metadata filter, graphmem/metadata.py)
// Columns: fetched (index hits read before the session and time filters),
//   hits (list of {id: message id, score}, best first; a message may repeat, once per sentence)
CYPHER 25
MATCH (s:Sentence {tenant: $tenant, owner: $owner})
  SEARCH s IN (
    VECTOR INDEX sentence_vector
    FOR $vector
    WHERE s.tenant = $tenant AND s.owner = $owner
    LIMIT $fetch
  ) SCORE AS score
WITH s, score ORDER BY score DESC
WITH collect({s: s, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE ($session_id IS NULL OR h.s.session_id = $session_id)
     AND ($time_from IS NULL OR h.s.timestamp >= $time_from)
     AND ($time_to IS NULL OR h.s.timestamp < $time_to)
     AND ($metadata IS NULL OR all(accepted IN $metadata
          WHERE any(p IN accepted WHERE p IN h.s.metadata_pairs)))
   | {id: h.s.message_id, score: h.score}] AS hits
