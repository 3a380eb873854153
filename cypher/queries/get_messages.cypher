// Purpose: messages of a tenant by id (any order; callers order them).
// Parameters: $tenant, $ids (list of strings)
// Columns: m (the message node's properties without vectors; batch_index orders equal times)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
RETURN m {.id, .owner, .session_id, .speaker, .role, .text, .timestamp, .recorded_at,
          .batch_index, .metadata_json} AS m
