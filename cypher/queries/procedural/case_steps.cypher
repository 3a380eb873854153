// Purpose: the steps a case was derived from, in order, and its trace.
// Parameters: $tenant, $id
// Columns: trace (map of the trace's properties), steps (list of step maps, in order)
MATCH (c:Case {tenant: $tenant, id: $id})-[:DERIVED_FROM]->(s:Step)
WITH c, s ORDER BY s.index
WITH c, collect(properties(s)) AS steps
MATCH (t:Trace {tenant: $tenant, id: c.trace_id})
RETURN properties(t) AS trace, steps
