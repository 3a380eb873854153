// Purpose: fulltext recall over episodes (title and narrative) of one tenant and owner.
//   Lucene reads only the owner's nodes (+scope:$scope; the scope clause weighs 0, so scores are
//   the text's alone, and a hit scored 0 matched no word); the tenant and owner are checked
//   again after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $query, $fetch,
//   $as_of (nullable: only episodes whose turns were all sent by then, reported_until <=
//   $as_of)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('episode_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $fetch})
YIELD node, score
WITH collect({e: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.score > 0 AND h.e.tenant = $tenant AND h.e.owner = $owner
     AND ($as_of IS NULL OR h.e.reported_until <= $as_of) | {id: h.e.id, score: h.score}]
    AS hits
