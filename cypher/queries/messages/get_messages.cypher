// Purpose: messages of a tenant by id (any order; callers order them).
// Parameters: $tenant, $ids (list of strings)
// Columns: messages (one row: the list of the messages found, each the node's properties without
//   vectors; batch_index orders equal times; its times as microseconds since the epoch,
//   timestamp_us and recorded_at_us: the driver reads a datetime ~50x slower than an integer;
//   one row, not one per message: the driver reads a record ~40 us slower than a list item)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
RETURN collect(m {.id, .owner, .session_id, .speaker, .role, .text, .batch_index, .metadata_json,
          .recorded_by,
          timestamp_us: m.timestamp.epochSeconds * 1000000 + m.timestamp.microsecond,
          recorded_at_us: m.recorded_at.epochSeconds * 1000000 + m.recorded_at.microsecond}) AS messages
