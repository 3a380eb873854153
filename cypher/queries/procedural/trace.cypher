// Purpose: a trace with its steps in order (what formation and case reads need).
// Parameters: $tenant, $id
// Columns: trace (map of the trace's properties), steps (list of step maps, in order)
MATCH (t:Trace {tenant: $tenant, id: $id})
OPTIONAL MATCH (t)-[:HAS_STEP]->(s:Step)
WITH t, s ORDER BY s.index
RETURN properties(t) AS trace, [x IN collect(s) | properties(x)] AS steps
