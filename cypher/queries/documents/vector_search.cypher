// Purpose: approximate vector recall over one owner's chunks valid at $t, filtered to the
//   tenant, owner, document keys and metadata after the index ($fetch over-fetches).
// Parameters: $tenant, $owner, $vector, $fetch, $t (datetime), $keys (list or null),
//   $pairs (list of metadata pairs every hit's document has, or null)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.vector.queryNodes('chunk_vector', $fetch, $vector) YIELD node, score
WITH collect({c: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.c.tenant = $tenant AND h.c.owner = $owner
     AND h.c.valid_from <= $t AND (h.c.valid_to IS NULL OR $t < h.c.valid_to)
     AND ($keys IS NULL OR h.c.key IN $keys)
     AND ($pairs IS NULL OR all(p IN $pairs WHERE p IN h.c.metadata_pairs))
   | {id: h.c.id, score: h.score}] AS hits
