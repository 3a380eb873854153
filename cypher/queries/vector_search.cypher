// Purpose: approximate vector recall over sentence units, filtered to one tenant and owner after
//   the index (Neo4j 5 cannot filter inside the vector index, so $fetch over-fetches).
// Parameters: $tenant, $owner, $vector, $fetch, $session_id, $time_from, $time_to,
//   $metadata (nullable; a metadata filter, graphmem/metadata.py)
// Columns: fetched (index hits read before filtering),
//   hits (list of {id: message id, score}, best first; a message may repeat, once per sentence)
CALL db.index.vector.queryNodes('sentence_vector', $fetch, $vector) YIELD node, score
WITH collect({s: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.s.tenant = $tenant AND h.s.owner = $owner
     AND ($session_id IS NULL OR h.s.session_id = $session_id)
     AND ($time_from IS NULL OR h.s.timestamp >= $time_from)
     AND ($time_to IS NULL OR h.s.timestamp < $time_to)
     AND ($metadata IS NULL OR all(accepted IN $metadata
          WHERE any(p IN accepted WHERE p IN h.s.metadata_pairs)))
   | {id: h.s.message_id, score: h.score}] AS hits
