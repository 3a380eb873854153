// Purpose: a skill's evidence, for and against: every case that supports it (successful runs)
//   and every case that contradicts it (failed runs), newest first, with each case's trace.
// Parameters: $tenant (string), $id (string)
// Columns: evidence ('for' or 'against'), case_id, outcome, intent, occurred_at, quality,
//   trace_id
// Example: :param tenant => 'demo'; :param id => 'sk-...-v1' (an id from GET /v1/skills/search)
MATCH (s:Skill {tenant: $tenant, id: $id})-[r:SUPPORTED_BY|CONTRADICTED_BY]->(c:Case)
RETURN CASE type(r) WHEN 'SUPPORTED_BY' THEN 'for' ELSE 'against' END AS evidence,
       c.id AS case_id, c.outcome AS outcome, c.intent AS intent, c.occurred_at AS occurred_at,
       c.quality AS quality, c.trace_id AS trace_id
ORDER BY evidence DESC, occurred_at DESC
