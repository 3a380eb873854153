// Purpose: create an episode, or extend one with more messages (derived memory: its title,
//   narrative and times are recomputed from all its messages), with DERIVED_FROM edges in order.
//   Its facts are extracted again (extracted_at is cleared) when an LLM is configured. Written
//   only if every one of its messages still exists (one forgotten since formation read the
//   session: no row, nothing written; the forgetting enqueued the session's formation again).
// Parameters: $tenant, $id, $now, $props (episode properties), $message_ids (in order), $scope
//   (the owner's fulltext scope, graphmem/store/scope.py)
// Columns: id, messages (how many it is derived from now); no row when a message is gone
WITH $message_ids AS ids
WHERE all(mid IN ids WHERE EXISTS { MATCH (:Message {tenant: $tenant, id: mid}) })
MERGE (e:Episode {tenant: $tenant, id: $id})
  ON CREATE SET e.created_at = $now
SET e += $props, e.scope = $scope, e.updated_at = $now, e.extracted_at = null
WITH e
CALL (e) {
  UNWIND range(0, size($message_ids) - 1) AS i
  MATCH (m:Message {tenant: $tenant, id: $message_ids[i]})
  MERGE (e)-[r:DERIVED_FROM]->(m)
  SET r.idx = i
}
RETURN e.id AS id, COUNT { (e)-[:DERIVED_FROM]->() } AS messages
