// Purpose: a case with the trace steps it was derived from, in order (user turns, assistant
//   turns, tool calls with their arguments, tool results).
// Parameters: $tenant (string), $id (string)
// Columns: case_intent, outcome, trace_id, index, kind, text, tool, arguments, writes
// Example: :param tenant => 'demo'; :param id => 'case-...'
MATCH (c:Case {tenant: $tenant, id: $id})-[:DERIVED_FROM]->(s:Step)
RETURN c.intent AS case_intent, c.outcome AS outcome, c.trace_id AS trace_id, s.index AS index,
       s.kind AS kind, left(s.text, 200) AS text, s.tool AS tool, s.arguments AS arguments,
       s.writes AS writes
ORDER BY index
