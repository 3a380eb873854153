// Purpose: fulltext recall over skills, filtered to one tenant and owner after the index. $query
//   must already be escaped.
// Parameters: $tenant, $owner, $query, $fetch, $t (datetime: skills valid then; null: current ones)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('skill_fulltext', $query, {limit: $fetch}) YIELD node, score
WITH collect({n: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.n.tenant = $tenant AND h.n.owner = $owner
     AND CASE WHEN $t IS NULL THEN h.n.valid_to IS NULL
              ELSE h.n.valid_from <= $t AND coalesce(h.n.valid_to > $t, true) END
   | {id: h.n.id, score: h.score}] AS hits
