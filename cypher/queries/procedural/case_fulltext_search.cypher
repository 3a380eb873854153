// Purpose: fulltext recall over cases, filtered to one tenant and owner after the index. $query
//   must already be escaped.
// Parameters: $tenant, $owner, $query, $fetch
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('case_fulltext', $query, {limit: $fetch}) YIELD node, score
WITH collect({n: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.n.tenant = $tenant AND h.n.owner = $owner | {id: h.n.id, score: h.score}]
    AS hits
