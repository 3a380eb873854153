// Purpose: fulltext recall over observations valid at $t (Lucene, english analyser) of one
//   tenant and owner.
//   Lucene reads only the owner's nodes (+scope:$scope; the scope clause weighs 0, so scores are
//   the text's alone, and a hit scored 0 matched no word); the tenant and owner are checked
//   again after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $query, $fetch, $t (datetime)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('fact_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $fetch})
YIELD node, score
WITH collect({f: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.score > 0 AND h.f.tenant = $tenant AND h.f.owner = $owner AND h.f.kind = 'observation'
     AND h.f.valid_from <= $t AND (h.f.valid_to IS NULL OR $t < h.f.valid_to)
   | {id: h.f.id, score: h.score}] AS hits
