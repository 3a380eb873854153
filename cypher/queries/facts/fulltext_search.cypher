// Purpose: fulltext recall over observations valid at $t (Lucene, english analyser), filtered to
//   one tenant and owner after the index. $query must already be escaped.
// Parameters: $tenant, $owner, $query, $fetch, $t (datetime)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('fact_fulltext', $query, {limit: $fetch}) YIELD node, score
WITH collect({f: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.f.tenant = $tenant AND h.f.owner = $owner AND h.f.kind = 'observation'
     AND h.f.valid_from <= $t AND (h.f.valid_to IS NULL OR $t < h.f.valid_to)
   | {id: h.f.id, score: h.score}] AS hits
