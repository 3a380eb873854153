// Purpose: store a batch of messages of one tenant, idempotently (MERGE on tenant + id).
//   A new message gets recorded_at = $now, recorded_by = $by (who sent it: an API key's id,
//   cli, mcp-stdio, or null) and batch = $batch; an existing one is left unchanged.
//   `caption` (speaker and a text excerpt) is what Neo4j Browser shows on the node.
// Parameters: $tenant, $batch (string), $now (datetime), $by (string or null), $scopes (owner -> fulltext scope,
//   graphmem/store/scope.py), $rows: list of maps
//   {id, owner, session_id, speaker, role, text, search_text, timestamp, metadata_json,
//    metadata_pairs (graphmem/messages/metadata.py: what a metadata filter matches), metadata_tokens
//    (its words in the metadata index, null without metadata), content_hash,
//    index, event_starts, event_ends (dates the text refers to, resolved)}
// Columns: id, created (true if this batch created it), conflict (true if the stored message
//   with this id has other content)
UNWIND $rows AS row
MERGE (m:Message {tenant: $tenant, id: row.id})
  ON CREATE SET
    m.owner = row.owner, m.session_id = row.session_id, m.speaker = row.speaker,
    m.role = row.role, m.text = row.text, m.search_text = row.search_text,
    m.scope = $scopes[row.owner],
    m.timestamp = row.timestamp, m.metadata_json = row.metadata_json,
    m.metadata_pairs = row.metadata_pairs, m.metadata_tokens = row.metadata_tokens,
    m.content_hash = row.content_hash, m.recorded_at = $now, m.recorded_by = $by,
    m.batch = $batch,
    m.event_starts = row.event_starts, m.event_ends = row.event_ends,
    m.batch_index = row.index,
    m.caption = row.speaker + ': ' +
      CASE WHEN size(row.text) > 60 THEN left(row.text, 57) + '...' ELSE row.text END
RETURN row.id AS id, m.batch = $batch AS created, m.content_hash <> row.content_hash AS conflict
