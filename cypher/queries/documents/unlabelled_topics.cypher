// Purpose: how many of an owner's topics no LLM has labelled yet (a build enqueues the
//   label_topics job only when some are).
// Parameters: $tenant, $owner
// Columns: topics
MATCH (t:Topic {tenant: $tenant, owner: $owner})
WHERE t.label_model IS NULL
RETURN count(t) AS topics
