// Purpose: fulltext recall over one owner's chunks valid at $t (Lucene, english analyser):
//   Lucene reads only the owner's chunks (+scope:$scope, weighing 0); tenant, owner, validity,
//   document keys and metadata are checked after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $query, $fetch, $t (datetime),
//   $keys (list or null), $pairs (list of metadata pairs every hit's document has, or null)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('chunk_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $fetch})
YIELD node, score
WITH collect({c: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.score > 0 AND h.c.tenant = $tenant AND h.c.owner = $owner
     AND h.c.valid_from <= $t AND (h.c.valid_to IS NULL OR $t < h.c.valid_to)
     AND ($keys IS NULL OR h.c.key IN $keys)
     AND ($pairs IS NULL OR all(p IN $pairs WHERE p IN h.c.metadata_pairs))
   | {id: h.c.id, score: h.score}] AS hits
