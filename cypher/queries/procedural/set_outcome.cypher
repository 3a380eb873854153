// Purpose: record a trace's outcome later (a grader's verdict, user feedback). The previous one
//   is kept on the trace as previous_outcome; formation runs again afterwards.
// Parameters: $tenant, $id, $outcome, $score, $detail, $feedback, $now (datetime)
// Columns: id, owner, outcome, previous (the outcome before)
MATCH (t:Trace {tenant: $tenant, id: $id})
WITH t, t.outcome AS previous
SET t.previous_outcome = previous, t.outcome = $outcome, t.score = $score,
    t.detail = coalesce($detail, t.detail), t.feedback = coalesce($feedback, t.feedback),
    t.outcome_at = $now
RETURN t.id AS id, t.owner AS owner, t.outcome AS outcome, previous
