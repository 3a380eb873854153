// Purpose: the messages of one session in event-time order (NEXT order), paged.
// Parameters: $tenant, $session_id, $owner (or null for any owner), $skip, $limit
// Columns: m (message properties without vectors)
MATCH (m:Message {tenant: $tenant, session_id: $session_id})
WHERE $owner IS NULL OR m.owner = $owner
WITH m ORDER BY m.owner, m.timestamp, m.recorded_at, m.batch_index, m.id
SKIP $skip LIMIT $limit
RETURN m {.id, .owner, .session_id, .speaker, .role, .text, .timestamp, .recorded_at,
          .metadata_json} AS m
