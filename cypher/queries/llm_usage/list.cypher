// Purpose: a tenant's LLM usage per UTC day, operation and model, oldest day first; `since` and
//   `until` (inclusive, either may be null) bound the days.
// Parameters: $tenant, $since (date or null), $until (date or null)
// Columns: day (YYYY-MM-DD), operation, model, calls, failures, prompt_tokens,
//   completion_tokens, attempts, latency_ms, proposed, kept (extraction; 0 for other
//   operations), dropped (map: reason -> proposals dropped)
MATCH (u:LLMUsage {tenant: $tenant})
WHERE ($since IS NULL OR u.day >= $since) AND ($until IS NULL OR u.day <= $until)
RETURN toString(u.day) AS day, u.operation AS operation, u.model AS model, u.calls AS calls,
       u.failures AS failures, u.prompt_tokens AS prompt_tokens,
       u.completion_tokens AS completion_tokens, u.attempts AS attempts,
       u.latency_ms AS latency_ms, coalesce(u.proposed, 0) AS proposed,
       coalesce(u.kept, 0) AS kept,
       {no_source: coalesce(u.dropped_no_source, 0),
        ungrounded: coalesce(u.dropped_ungrounded, 0), empty: coalesce(u.dropped_empty, 0),
        invalid: coalesce(u.dropped_invalid, 0)} AS dropped
ORDER BY day, operation, model
