// Purpose: episodes of a tenant by id, with the ids of their source messages in order.
// Parameters: $tenant, $ids
// Columns: e (episode properties without vectors), messages (source message ids, in order)
UNWIND $ids AS id
MATCH (e:Episode {tenant: $tenant, id: id})
CALL (e) {
  MATCH (e)-[r:DERIVED_FROM]->(m:Message)
  WITH m ORDER BY r.idx
  RETURN collect(m.id) AS messages
}
RETURN e {.id, .owner, .session_id, .title, .narrative, .participants, .reported_at,
          .reported_until, .occurred_at, .occurred_until, .formed_by} AS e, messages
