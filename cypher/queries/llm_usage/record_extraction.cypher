// Purpose: add one fact extraction's outcome to its tenant's row for (UTC day, operation,
//   model): proposals, proposals kept (written), and proposals dropped, one counter per reason.
//   The call itself was counted by record.cypher; this row normally exists already.
// Parameters: $tenant, $day (date), $at (datetime), $operation, $model, $proposed, $kept,
//   $dropped_no_source, $dropped_ungrounded, $dropped_empty, $dropped_invalid (ints)
// Columns: proposed, kept (the row's sums, this extraction included)
MERGE (u:LLMUsage {tenant: $tenant, day: $day, operation: $operation, model: $model})
  ON CREATE SET u.calls = 0, u.failures = 0, u.prompt_tokens = 0, u.completion_tokens = 0,
    u.attempts = 0, u.latency_ms = 0.0, u.first_at = $at,
    u.caption = $operation + ' ' + toString($day)
SET u.last_at = $at
WITH u
SET u.proposed = coalesce(u.proposed, 0) + $proposed,
    u.kept = coalesce(u.kept, 0) + $kept,
    u.dropped_no_source = coalesce(u.dropped_no_source, 0) + $dropped_no_source,
    u.dropped_ungrounded = coalesce(u.dropped_ungrounded, 0) + $dropped_ungrounded,
    u.dropped_empty = coalesce(u.dropped_empty, 0) + $dropped_empty,
    u.dropped_invalid = coalesce(u.dropped_invalid, 0) + $dropped_invalid
RETURN u.proposed AS proposed, u.kept AS kept
