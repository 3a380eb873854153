// Purpose: episodes of a tenant by id, with the ids of their source messages in order.
// Parameters: $tenant, $ids
// Columns: episodes (one row: a list of {e, messages} per episode found: e the episode's
//   properties without vectors, its times as microseconds since the epoch, reported_at_us,
//   reported_until_us, occurred_at_us, occurred_until_us: the driver reads a datetime ~75x slower
//   than an integer; messages its source message ids, in order; one row, not one per episode)
UNWIND $ids AS id
MATCH (e:Episode {tenant: $tenant, id: id})
CALL (e) {
  MATCH (e)-[r:DERIVED_FROM]->(m:Message)
  WITH m ORDER BY r.idx
  RETURN collect(m.id) AS messages
}
RETURN collect({
  e: e {.id, .owner, .session_id, .title, .narrative, .participants, .formed_by,
        reported_at_us: e.reported_at.epochSeconds * 1000000 + e.reported_at.microsecond,
        reported_until_us: e.reported_until.epochSeconds * 1000000 + e.reported_until.microsecond,
        occurred_at_us: e.occurred_at.epochSeconds * 1000000 + e.occurred_at.microsecond,
        occurred_until_us: e.occurred_until.epochSeconds * 1000000 + e.occurred_until.microsecond},
  messages: messages}) AS episodes
