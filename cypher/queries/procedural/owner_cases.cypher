// Purpose: the cases of an owner that skill formation clusters (not filtered), newest first, at
//   most $limit, with their embeddings.
// Parameters: $tenant, $owner, $limit
// Columns: id, intent, masked_intent, actions_json, writes, entities, outcome, occurred_at,
//   conditions_json, embedding, cluster, trace_id
MATCH (c:Case {tenant: $tenant, owner: $owner})
WHERE NOT c.filtered
RETURN c.id AS id, c.intent AS intent, c.masked_intent AS masked_intent,
       c.actions_json AS actions_json, c.writes AS writes,
       c.entities AS entities, c.outcome AS outcome, c.occurred_at AS occurred_at,
       c.conditions_json AS conditions_json, c.embedding AS embedding, c.cluster AS cluster,
       c.trace_id AS trace_id
ORDER BY c.occurred_at DESC, c.id
LIMIT $limit
