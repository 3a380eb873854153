// Purpose: an owner's sessions (conversations), the one with the latest message first (event
//   time), paged.
// Parameters: $tenant, $owner, $skip, $limit
// Columns: s (owner, session_id, message_count; first_at_us and last_at_us: the event times of
//   its first and last message as microseconds since the epoch)
MATCH (s:Session {tenant: $tenant, owner: $owner})
WITH s ORDER BY s.last_at DESC, s.session_id
SKIP $skip LIMIT $limit
RETURN s {.owner, .session_id, .message_count,
          first_at_us: s.first_at.epochSeconds * 1000000 + s.first_at.microsecond,
          last_at_us: s.last_at.epochSeconds * 1000000 + s.last_at.microsecond} AS s
