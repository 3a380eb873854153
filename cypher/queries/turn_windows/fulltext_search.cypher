// Purpose: fulltext recall over turn windows of one size (Lucene, english analyser) of one
//   tenant and owner.
//   Lucene reads only the owner's nodes (+scope:$scope; the scope clause weighs 0, so scores are
//   the text's alone, and a hit scored 0 matched no word); the tenant and owner are checked
//   again after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $size, $query, $fetch,
//   $session_id, $time_from, $time_to (nullable)
// Columns: fetched (index hits read before filtering),
//   hits (list of {id, score, messages: the covered message ids in order}, best first)
CALL db.index.fulltext.queryNodes('window_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $fetch})
YIELD node, score
WITH collect({w: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.score > 0 AND h.w.tenant = $tenant AND h.w.owner = $owner AND h.w.size = $size
     AND ($session_id IS NULL OR h.w.session_id = $session_id)
     AND ($time_from IS NULL OR h.w.first_at >= $time_from)
     AND ($time_to IS NULL OR h.w.last_at < $time_to)
   | {id: h.w.id, score: h.score, messages: h.w.message_ids}] AS hits
