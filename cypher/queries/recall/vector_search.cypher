// Purpose: approximate vector recall over sentence units, filtered to one tenant and owner after
//   the index (Neo4j 5 cannot filter inside the vector index, so $fetch over-fetches).
// Parameters: $tenant, $owner, $vector, $fetch, $session_id, $time_from, $time_to,
//   $metadata (nullable; a metadata filter, graphmem/messages/metadata.py)
// Columns: fetched (index hits read before filtering),
//   hits (list of {id: message id, score}, best first; a message may repeat, once per sentence)
CALL db.index.vector.queryNodes('sentence_vector', $fetch, $vector) YIELD node, score
WITH collect({s: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.s.tenant = $tenant AND h.s.owner = $owner
     AND ($session_id IS NULL OR h.s.session_id = $session_id)
     AND ($time_from IS NULL OR h.s.timestamp >= $time_from)
     AND ($time_to IS NULL OR h.s.timestamp < $time_to)
     AND ($metadata IS NULL OR all(c IN $metadata WHERE
           (c.any IS NULL OR any(p IN c.any WHERE p IN h.s.metadata_pairs))
           AND none(p IN c.none WHERE p IN coalesce(h.s.metadata_pairs, []))
           AND (c.has IS NULL
                OR c.has = any(p IN coalesce(h.s.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
           AND (c.low IS NULL AND c.high IS NULL
                OR any(v IN [p IN coalesce(h.s.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                             | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
                       WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))
   | {id: h.s.message_id, score: h.score}] AS hits
