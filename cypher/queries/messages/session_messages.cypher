// Purpose: the messages of one session in event-time order (NEXT order), paged.
// Parameters: $tenant, $session_id, $owner (or null for any owner), $skip, $limit
// Columns: m (message properties without vectors; times as microseconds since the epoch,
//   timestamp_us and recorded_at_us)
MATCH (m:Message {tenant: $tenant, session_id: $session_id})
WHERE $owner IS NULL OR m.owner = $owner
WITH m ORDER BY m.owner, m.timestamp, m.recorded_at, m.batch_index, m.id
SKIP $skip LIMIT $limit
RETURN m {.id, .owner, .session_id, .speaker, .role, .text, .metadata_json, .recorded_by,
          timestamp_us: m.timestamp.epochSeconds * 1000000 + m.timestamp.microsecond,
          recorded_at_us: m.recorded_at.epochSeconds * 1000000 + m.recorded_at.microsecond} AS m
