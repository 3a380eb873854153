// Purpose: an owner's sessions (conversations), the one with the latest message first (event
//   time), paged. Read from the index session_recent in its order: a page costs skip + limit
//   index entries, however many sessions the owner has.
// Parameters: $tenant, $owner, $skip, $limit
// Columns: s (owner, session_id, message_count; first_at_us and last_at_us: the event times of
//   its first and last message as microseconds since the epoch)
MATCH (s:Session {tenant: $tenant, owner: $owner})
  USING INDEX s:Session(tenant, owner, last_at)
WHERE s.last_at IS NOT NULL
WITH s ORDER BY s.tenant, s.owner, s.last_at DESC
SKIP $skip LIMIT $limit
RETURN s {.owner, .session_id, .message_count,
          first_at_us: s.first_at.epochSeconds * 1000000 + s.first_at.microsecond,
          last_at_us: s.last_at.epochSeconds * 1000000 + s.last_at.microsecond} AS s
