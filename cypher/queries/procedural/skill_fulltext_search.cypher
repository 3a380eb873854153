// Purpose: fulltext recall over skills of one tenant and owner.
//   Lucene reads only the owner's nodes (+scope:$scope; the scope clause weighs 0, so scores are
//   the text's alone, and a hit scored 0 matched no word); the tenant and owner are checked
//   again after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $query, $fetch, $t (datetime:
//   skills valid then), $known
//   (datetime: as recorded by then: versions recorded by it, closed only by supersessions
//   recorded by it); both null: the current versions
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('skill_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: $fetch})
YIELD node, score
WITH collect({n: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.score > 0 AND h.n.tenant = $tenant AND h.n.owner = $owner
     AND ($known IS NULL OR h.n.recorded_at <= $known)
     AND CASE WHEN $t IS NULL AND $known IS NULL THEN h.n.invalidated_at IS NULL
              ELSE h.n.valid_from <= coalesce($t, $known)
                AND (h.n.valid_to IS NULL OR coalesce(h.n.invalidated_at > $known, false)
                     OR coalesce($t, $known) < h.n.valid_to) END
   | {id: h.n.id, score: h.score}] AS hits
