// Purpose: approximate vector recall over episodes, filtered to one tenant and owner after the
//   index ($fetch over-fetches).
// Parameters: $tenant, $owner, $vector, $fetch
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.vector.queryNodes('episode_vector', $fetch, $vector) YIELD node, score
WITH collect({e: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.e.tenant = $tenant AND h.e.owner = $owner | {id: h.e.id, score: h.score}]
    AS hits
