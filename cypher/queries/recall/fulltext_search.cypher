// Purpose: fulltext recall over messages (Lucene, english analyser) of one tenant and owner.
//   Lucene reads only the owner's nodes (+scope:$scope; the scope clause weighs 0, so scores are
//   the text's alone, and a hit scored 0 matched no word); the tenant and owner are checked
//   again after the index.
//   $query must already be escaped: user text is never Lucene syntax.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $query, $fetch, $k (hits kept),
//   $session_id, $time_from, $time_to, $metadata (nullable; a
//   metadata filter, graphmem/messages/metadata.py)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first,
//   at most $k: a message is one hit, so the first k are the best k)
CALL db.index.fulltext.queryNodes('message_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $fetch})
YIELD node, score
WITH collect({m: node, score: score}) AS found
CALL (found) {
  // in the index's order, stopping at the k-th hit kept: only those hits' properties are read
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
  RETURN collect({id: h.m.id, score: h.score}) AS hits
}
RETURN size(found) AS fetched, hits
