// Purpose: fulltext recall over messages (Lucene, english analyser), filtered to one tenant and
//   owner after the index. $query must already be escaped: user text is never Lucene syntax.
// Parameters: $tenant, $owner, $query, $fetch, $session_id, $time_from, $time_to (nullable)
// Columns: fetched (index hits read before filtering), hits (list of {id, score}, best first)
CALL db.index.fulltext.queryNodes('message_fulltext', $query, {limit: $fetch}) YIELD node, score
WITH collect({m: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.m.tenant = $tenant AND h.m.owner = $owner
     AND ($session_id IS NULL OR h.m.session_id = $session_id)
     AND ($time_from IS NULL OR h.m.timestamp >= $time_from)
     AND ($time_to IS NULL OR h.m.timestamp < $time_to)
   | {id: h.m.id, score: h.score}] AS hits
