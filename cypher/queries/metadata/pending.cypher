// Purpose: messages stored with metadata before metadata filters existed: their metadata as
//   sent, for the migration to encode (graphmem/messages/metadata.py). Every tenant: a migration. Messages
//   without metadata need nothing (no filter matches them either way).
// Parameters: none
// Columns: tenant, owner, id, metadata_json
MATCH (m:Message)
WHERE m.metadata_pairs IS NULL AND m.metadata_json IS NOT NULL AND m.metadata_json <> '{}'
RETURN m.tenant AS tenant, m.owner AS owner, m.id AS id, m.metadata_json AS metadata_json
