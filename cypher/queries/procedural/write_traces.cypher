// Purpose: store traces of one tenant, idempotently (MERGE on tenant + id). A new trace gets
//   recorded_at = $now, recorded_by (who sent it) and batch = $batch; an existing one is left
//   unchanged (its outcome too: outcomes change through set_outcome).
// Parameters: $tenant, $batch (string), $now (datetime), $rows: list of maps {id, owner, agent,
//   session_id, task, started_at, outcome, score, detail, feedback, conditions_json,
//   content_hash, step_count, caption, recorded_by (string or null)}
// Columns: id, created (true if this batch created it), conflict (stored with other content)
UNWIND $rows AS row
MERGE (t:Trace {tenant: $tenant, id: row.id})
  ON CREATE SET
    t.owner = row.owner, t.agent = row.agent, t.session_id = row.session_id, t.task = row.task,
    t.started_at = row.started_at, t.outcome = row.outcome, t.score = row.score,
    t.detail = row.detail, t.feedback = row.feedback, t.conditions_json = row.conditions_json,
    t.content_hash = row.content_hash, t.step_count = row.step_count, t.caption = row.caption,
    t.recorded_at = $now, t.recorded_by = row.recorded_by, t.batch = $batch
RETURN row.id AS id, t.batch = $batch AS created, t.content_hash <> row.content_hash AS conflict
