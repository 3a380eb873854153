// Purpose: approximate vector recall over turn windows of one size, filtered to one tenant and
//   owner after the index ($fetch over-fetches); with a time filter, only windows wholly inside it.
// Parameters: $tenant, $owner, $size, $vector, $fetch, $session_id, $time_from, $time_to (nullable)
// Columns: fetched (index hits read before filtering),
//   hits (list of {id, score, messages: the covered message ids in order}, best first)
CALL db.index.vector.queryNodes('window_vector', $fetch, $vector) YIELD node, score
WITH collect({w: node, score: score}) AS found
RETURN size(found) AS fetched,
  [h IN found WHERE h.w.tenant = $tenant AND h.w.owner = $owner AND h.w.size = $size
     AND ($session_id IS NULL OR h.w.session_id = $session_id)
     AND ($time_from IS NULL OR h.w.first_at >= $time_from)
     AND ($time_to IS NULL OR h.w.last_at < $time_to)
   | {id: h.w.id, score: h.score, messages: h.w.message_ids}] AS hits
