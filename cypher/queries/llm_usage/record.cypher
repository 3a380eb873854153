// Purpose: add one LLM call to its tenant's row for (UTC day, operation, model): calls, failures,
//   tokens, HTTP attempts and latency are summed. The first SET takes the node's write lock
//   before the sums are read, so concurrent calls never lose an update.
// Parameters: $tenant, $day (date), $at (datetime of the call), $operation, $model,
//   $prompt_tokens, $completion_tokens, $attempts (ints), $latency_ms (float), $ok (boolean)
// Columns: calls (the row's calls, this one included)
MERGE (u:LLMUsage {tenant: $tenant, day: $day, operation: $operation, model: $model})
  ON CREATE SET u.calls = 0, u.failures = 0, u.prompt_tokens = 0, u.completion_tokens = 0,
    u.attempts = 0, u.latency_ms = 0.0, u.first_at = $at,
    u.caption = $operation + ' ' + toString($day)
SET u.last_at = $at
WITH u
SET u.calls = u.calls + 1,
    u.failures = u.failures + CASE WHEN $ok THEN 0 ELSE 1 END,
    u.prompt_tokens = u.prompt_tokens + $prompt_tokens,
    u.completion_tokens = u.completion_tokens + $completion_tokens,
    u.attempts = u.attempts + $attempts,
    u.latency_ms = u.latency_ms + $latency_ms
RETURN u.calls AS calls
