// Purpose: the two message recall lists in one round trip on Neo4j 2026.01+ (Cypher 25 SEARCH):
//   vector_search.search.cypher's recall over sentence units (tenant and owner filtered inside
//   the index) and fulltext_search.cypher's recall over the owner's messages. Each part is its
//   own file's query, unchanged; the columns of each are prefixed. Neo4j 5: hybrid_search.cypher.
//   $query must already be escaped: user text is never Lucene syntax.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $vector, $vector_fetch, $query,
//   $text_fetch, $k (fulltext hits kept), $session_id, $time_from, $time_to, $metadata (nullable; a
//   metadata filter, graphmem/messages/metadata.py)
// Columns: vector_fetched, vector_hits (list of {id: message id, score}, best first; a message
//   may repeat, once per sentence), text_fetched, text_hits (list of {id, score}, best first,
//   at most $k)
CYPHER 25
CALL () {
  MATCH (s:Sentence {tenant: $tenant, owner: $owner})
    SEARCH s IN (
      VECTOR INDEX sentence_vector
      FOR $vector
      WHERE s.tenant = $tenant AND s.owner = $owner
      LIMIT $vector_fetch
    ) SCORE AS score
  WITH s, score ORDER BY score DESC
  WITH collect({s: s, score: score}) AS found
  RETURN size(found) AS vector_fetched,
    [h IN found WHERE ($session_id IS NULL OR h.s.session_id = $session_id)
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
     | {id: h.s.message_id, score: h.score}] AS vector_hits
}
CALL () {
  CALL db.index.fulltext.queryNodes('message_fulltext',
    '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $text_fetch})
  YIELD node, score
  WITH collect({m: node, score: score}) AS found
  CALL (found) {
    UNWIND found AS h
    WITH h WHERE h.score > 0 AND h.m.tenant = $tenant AND h.m.owner = $owner
       AND ($session_id IS NULL OR h.m.session_id = $session_id)
       AND ($time_from IS NULL OR h.m.timestamp >= $time_from)
       AND ($time_to IS NULL OR h.m.timestamp < $time_to)
       AND ($metadata IS NULL OR all(c IN $metadata WHERE
             (c.any IS NULL OR any(p IN c.any WHERE p IN h.m.metadata_pairs))
             AND none(p IN c.none WHERE p IN coalesce(h.m.metadata_pairs, []))
             AND (c.has IS NULL
                  OR c.has = any(p IN coalesce(h.m.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
             AND (c.low IS NULL AND c.high IS NULL
                  OR any(v IN [p IN coalesce(h.m.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                               | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
                         WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))
    LIMIT $k
    RETURN collect({id: h.m.id, score: h.score}) AS text_hits
  }
  RETURN size(found) AS text_fetched, text_hits
}
RETURN vector_fetched, vector_hits, text_fetched, text_hits
