// Purpose: approximate vector recall over observations valid at $t, filtered to one tenant and
//   owner after the index ($fetch over-fetches).
// Parameters: $tenant, $owner, $vector, $fetch, $t (datetime)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.vector.queryNodes('fact_vector', $fetch, $vector) YIELD node, score
WITH collect({f: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.f.tenant = $tenant AND h.f.owner = $owner AND h.f.kind = 'observation'
     AND h.f.valid_from <= $t AND (h.f.valid_to IS NULL OR $t < h.f.valid_to)
   | {id: h.f.id, score: h.score}] AS hits
