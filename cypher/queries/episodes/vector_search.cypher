// Purpose: approximate vector recall over episodes, filtered to one tenant and owner after the
//   index ($fetch over-fetches).
// Parameters: $tenant, $owner, $vector, $fetch,
//   $as_of (nullable: only episodes whose turns were all sent by then, reported_until <=
//   $as_of)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.vector.queryNodes('episode_vector', $fetch, $vector) YIELD node, score
WITH collect({e: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.e.tenant = $tenant AND h.e.owner = $owner
     AND ($as_of IS NULL OR h.e.reported_until <= $as_of) | {id: h.e.id, score: h.score}]
    AS hits
