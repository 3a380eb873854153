// Purpose: fulltext recall over skills, filtered to one tenant and owner after the index. $query
//   must already be escaped.
// Parameters: $tenant, $owner, $query, $fetch, $t (datetime: skills valid then), $known
//   (datetime: as recorded by then: versions recorded by it, closed only by supersessions
//   recorded by it); both null: the current versions
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('skill_fulltext', $query, {limit: $fetch}) YIELD node, score
WITH collect({n: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.n.tenant = $tenant AND h.n.owner = $owner
     AND ($known IS NULL OR h.n.recorded_at <= $known)
     AND CASE WHEN $t IS NULL AND $known IS NULL THEN h.n.invalidated_at IS NULL
              ELSE h.n.valid_from <= coalesce($t, $known)
                AND (h.n.valid_to IS NULL OR coalesce(h.n.invalidated_at > $known, false)
                     OR coalesce($t, $known) < h.n.valid_to) END
   | {id: h.n.id, score: h.score}] AS hits
