// Purpose: fulltext recall over episodes (title and narrative), filtered to one tenant and owner
//   after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $query, $fetch
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('episode_fulltext', $query, {limit: $fetch}) YIELD node, score
WITH collect({e: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.e.tenant = $tenant AND h.e.owner = $owner | {id: h.e.id, score: h.score}]
    AS hits
